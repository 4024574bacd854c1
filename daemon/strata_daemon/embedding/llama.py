"""Embeddings from a GGUF model through llama-cpp-python. Blocking: call it from a thread."""

from __future__ import annotations

import contextlib
import os
import threading

import numpy as np

from strata_daemon.base import cpu
from strata_daemon.embedding.model import ModelFile, _check_gguf
from strata_daemon.errors import INSTALL_LLM, EmbeddingUnavailable


class LlamaEmbedder:
    """Mean-pooled, L2-normalised sentence embeddings. Texts longer than the context are truncated."""

    runtime = "llama"

    def __init__(self, model: ModelFile, *, threads: int = 2, context: int = 512):
        _check_gguf(model.path)
        try:
            cpu.passive_openmp()
            from llama_cpp import LLAMA_POOLING_TYPE_MEAN, Llama
        except ImportError:
            raise EmbeddingUnavailable("llama-cpp-python is not installed (embedding.runtime = \"llama\" needs it)",
                                       hint=INSTALL_LLM) from None
        self.name = model.name
        self.path = model.path
        # llama.cpp reports load failures on stderr and then raises; keep its noise out of our output.
        with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull):
            try:
                self._llm = Llama(model_path=str(model.path), embedding=True, n_ctx=context, n_batch=context,
                                  n_ubatch=context, n_threads=threads, pooling_type=LLAMA_POOLING_TYPE_MEAN,
                                  verbose=False)
            except (ValueError, RuntimeError, OSError) as e:
                raise EmbeddingUnavailable(f"llama.cpp could not load the embedding model {model.path}: {e}",
                                           hint="the file may be damaged or not an embedding model") from None
        self.context = context
        self.dim = int(self._llm.n_embd())
        self._lock = threading.Lock()  # one llama context: one caller at a time

    def _fit(self, text: str) -> str:
        if len(text) <= self.context - 12:  # a WordPiece token covers at least one character
            return text
        tokens = self._llm.tokenize(text.encode("utf-8"), add_bos=True)
        if len(tokens) <= self.context:
            return text
        # Cut on tokens, then decode back: the model sees the opening of a long memory.
        return self._llm.detokenize(tokens[1:self.context - 1]).decode("utf-8", "ignore")

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            # One text per call: BERT attends across the whole micro-batch, so packing several
            # texts into one costs more than it saves (measured: ~230 texts/s alone, ~85 packed).
            vectors = np.asarray([self._llm.embed(self._fit(t), normalize=False) for t in texts], dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """A GGUF model is taken to embed queries and memories alike."""
        return self.embed(texts)
