"""The packaged embedding model in both runtimes (int8 ONNX in onnxruntime; the weights
converted to GGUF in llama.cpp), each checked against an independent numpy implementation
of the same network."""

import os

import numpy as np
import pytest

from minilm_reference import ReferenceMiniLM
from strata_daemon.embedding.convert import ConversionError, read_safetensors
from strata_daemon.embedding.llama import LlamaEmbedder
from strata_daemon.embedding.loader import load_embedder
from strata_daemon.embedding.model import configured_model, default_model, packaged_source, sha256
from strata_daemon.embedding.onnx import MODEL_SHA256, OnnxEmbedder, packaged_model, verified
from strata_daemon.errors import EmbeddingUnavailable

TEXTS = [
    "The bridge went down on gw-02.",
    "Connectivity to gateway two was lost.",
    "I baked a lemon cake for Sunday.",
    "ERR_CONN_RESET talking to the mail relay (attempt 3)",
    "Crème brûlée, naïve café — über 90% done!",
]


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("models")


# Agreement with the float reference: Q8_0 keeps more precision than the int8 ONNX export.
AGREEMENT = {"llama": 0.999, "onnx": 0.998}


@pytest.fixture(scope="module", params=["onnx", "llama"])
def embedder(request, models_dir):
    return load_embedder(None, request.param, models_dir)


@pytest.fixture(scope="module")
def reference():
    return ReferenceMiniLM(packaged_source())


def test_each_runtime_matches_the_reference_network(embedder, reference):
    vectors = embedder.embed(TEXTS)
    for text, v in zip(TEXTS, vectors):
        assert float(v @ reference.embed(text)) > AGREEMENT[embedder.runtime], text


def test_shape_norm_and_batch_equals_single(embedder):
    batch = embedder.embed(TEXTS)
    assert batch.shape == (len(TEXTS), 384) and embedder.dim == 384
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    for i in (0, 3):  # a text's vector does not depend on what it was batched with
        assert float(embedder.embed([TEXTS[i]])[0] @ batch[i]) > 0.99999
    assert embedder.embed([]).shape == (0, 384)


def test_paraphrase_is_closer_than_an_unrelated_text(embedder):
    a, b, c = embedder.embed(TEXTS[:3])
    assert float(a @ b) > float(a @ c) + 0.2


def test_long_text_is_embedded_from_its_first_512_tokens(embedder, reference):
    # About 400 tokens on backups, then about 1,200 on a cake: the first 512 are mostly backups.
    backups = " ".join(f"the backup job failed again on nas-{i:02d} after {i} retries" for i in range(30))
    cake = " ".join(f"she baked a lemon cake with {i} eggs for the sunday picnic" for i in range(100))
    v = embedder.embed([f"{backups} {cake}"])
    assert v.shape == (1, 384) and np.isfinite(v).all()
    # the reference truncates at 512 tokens too
    agreement = float(v[0] @ reference.embed(f"{backups} {cake}"))
    assert agreement > AGREEMENT[embedder.runtime]
    # not cut sooner (backups alone) nor later (mostly cake): both are further from it
    for other in embedder.embed([backups, cake]):
        assert float(v[0] @ other) < agreement - 0.01


def test_a_query_is_read_to_its_first_256_tokens_and_a_memory_to_512(models_dir):
    # A query longer than a question is a pasted text: reading its 512 tokens held up every hook.
    from strata_daemon.embedding.onnx import QUERY_TOKENS

    onnx = load_embedder(None, "onnx", models_dir)
    backups = " ".join(f"the backup job failed again on nas-{i:02d} after {i} retries" for i in range(30))
    short = "where do the backups of nas-01 go?"
    assert QUERY_TOKENS == 256 and float(onnx.embed_queries([short])[0] @ onnx.embed([short])[0]) > 0.99999
    query = onnx.embed_queries([backups])[0]
    assert float(query @ onnx.embed([backups], tokens=256)[0]) > 0.99999
    assert float(query @ onnx.embed([backups])[0]) < 0.999  # a memory is still read further
    assert float(onnx.embed([backups])[0] @ onnx.embed([backups], tokens=512)[0]) > 0.99999


def test_default_model_is_converted_once_and_verified_on_load(models_dir):
    first = default_model(models_dir)
    stamp = first.path.stat().st_mtime_ns
    assert default_model(models_dir).path.stat().st_mtime_ns == stamp  # cached, not reconverted
    assert (first.path.stat().st_mode & 0o777) == 0o600
    with open(first.path, "r+b") as f:  # damage one byte in the middle of the weights
        f.seek(first.path.stat().st_size // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))
    repaired = default_model(models_dir)
    assert sha256(repaired.path) == (repaired.path.parent / (repaired.path.name + ".sha256")).read_text().strip()


def test_configured_model_errors_are_clear(tmp_path, models_dir):
    with pytest.raises(EmbeddingUnavailable, match="does not exist"):
        configured_model(str(tmp_path / "absent.gguf"), models_dir)
    text = tmp_path / "notes.gguf"
    text.write_text("not a model")
    with pytest.raises(EmbeddingUnavailable, match="not a GGUF"):
        configured_model(str(text), models_dir)
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(default_model(models_dir).path.read_bytes()[:4096])
    with pytest.raises(EmbeddingUnavailable, match="could not load"):
        LlamaEmbedder(configured_model(str(truncated), models_dir))


def test_a_configured_gguf_is_used_as_given(models_dir, tmp_path):
    copy = tmp_path / "my-embedder.gguf"
    copy.write_bytes(default_model(models_dir).path.read_bytes())
    model = configured_model(str(copy), models_dir)
    assert model.name == "my-embedder" and LlamaEmbedder(model).dim == 384


def test_damaged_safetensors_is_reported(tmp_path):
    bad = tmp_path / "model.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all}")
    with pytest.raises(ConversionError, match="damaged"):
        read_safetensors(bad)


def test_auto_runtime_picks_onnx_unless_a_gguf_is_configured(models_dir, tmp_path):
    assert load_embedder(None, "auto", models_dir).runtime == "onnx"
    copy = tmp_path / "mine.gguf"
    copy.write_bytes(default_model(models_dir).path.read_bytes())
    assert load_embedder(str(copy), "auto", models_dir).runtime == "llama"
    with pytest.raises(EmbeddingUnavailable, match="onnx runtime cannot run"):
        load_embedder(str(copy), "onnx", models_dir)
    with pytest.raises(EmbeddingUnavailable, match="unknown embedding runtime"):
        load_embedder(None, "torch", models_dir)


def test_onnx_model_is_verified_and_a_damaged_one_is_reported(tmp_path):
    assert verified(packaged_model(), MODEL_SHA256) == packaged_model()
    damaged = tmp_path / "model.onnx"
    data = bytearray(packaged_model().read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    with pytest.raises(EmbeddingUnavailable, match="does not match its checksum"):
        verified(damaged, MODEL_SHA256)
    damaged.write_bytes(b"not a model")
    with pytest.raises(EmbeddingUnavailable, match="could not load"):
        OnnxEmbedder(model=damaged)
