"""Choosing the embedder the configuration asks for."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

from ..errors import EmbeddingUnavailable
from .model import configured_model

RUNTIMES = ("auto", "onnx", "llama")


class Embedder(Protocol):
    name: str  # recorded in the database: vectors of different models never mix
    dim: int
    runtime: str  # "onnx" or "llama"

    def embed(self, texts: list[str]) -> np.ndarray:
        """One L2-normalised float32 row per text. Blocking."""


def load_embedder(model: str | None, runtime: str, models_dir: Path, *, threads: int = 2) -> Embedder:
    """`auto` runs a configured GGUF in llama.cpp and otherwise the packaged int8 MiniLM in onnxruntime."""
    if runtime not in RUNTIMES:
        raise EmbeddingUnavailable(f"unknown embedding runtime {runtime!r}", hint=f"use one of {', '.join(RUNTIMES)}")
    if runtime == "onnx" and model:
        raise EmbeddingUnavailable("[embedding] model names a GGUF file, which the onnx runtime cannot run",
                                   hint="set [embedding] runtime = \"auto\" or \"llama\"")
    if runtime == "onnx" or (runtime == "auto" and not model):
        from .onnx import OnnxEmbedder

        return OnnxEmbedder(threads=threads)
    from .llama import LlamaEmbedder

    return LlamaEmbedder(configured_model(model, models_dir), threads=threads)
