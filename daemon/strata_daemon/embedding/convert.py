"""Convert a BERT sentence-embedding model (Hugging Face folder: safetensors, config.json,
vocab.txt) to a GGUF file llama.cpp can run, without torch.

Matrices are stored as Q8_0; norms, biases and the position and token-type embeddings stay
F32, which keeps the embeddings within rounding of the original (measured in the tests).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

_F32_ALWAYS = ("position_embd", "token_types")
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


class ConversionError(Exception):
    pass


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a .safetensors file (8-byte header length, JSON header, raw little-endian data)."""
    return parse_safetensors(path.read_bytes(), path)


def parse_safetensors(raw: bytes, path: Path | str) -> dict[str, np.ndarray]:
    """The tensors of safetensors bytes read already; `path` names them in errors."""
    if len(raw) < 8:
        raise ConversionError(f"{path} is too short to be a safetensors file")
    (size,) = struct.unpack("<Q", raw[:8])
    try:
        header = json.loads(raw[8:8 + size])
    except (ValueError, UnicodeDecodeError):
        raise ConversionError(f"{path} has a damaged safetensors header") from None
    base = 8 + size
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise ConversionError(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(raw, dtype=dtype, count=(end - start) // np.dtype(dtype).itemsize,
                                  offset=base + start).reshape(info["shape"])
    return out


def _phantom(token: str) -> str:
    # llama.cpp's WordPiece vocabulary marks word starts with U+2581 instead of marking continuations with ##.
    if token.startswith("[") and token.endswith("]"):
        return token
    if token.startswith("##"):
        return token[2:]
    return "\u2581" + token


def convert_bert(model_dir: Path, out_path: Path, *, name: str = "all-MiniLM-L6-v2") -> Path:
    import gguf

    config = json.loads((model_dir / "config.json").read_text())
    if config.get("model_type") != "bert":
        raise ConversionError(f"{model_dir} holds a {config.get('model_type')!r} model; only BERT converts here")
    vocab = (model_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
    tensors = read_safetensors(model_dir / "model.safetensors")
    blocks = int(config["num_hidden_layers"])
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, blocks)

    tmp = out_path.with_suffix(".partial")
    w = gguf.GGUFWriter(str(tmp), "bert")
    w.add_name(name)
    w.add_context_length(int(config["max_position_embeddings"]))
    w.add_embedding_length(int(config["hidden_size"]))
    w.add_feed_forward_length(int(config["intermediate_size"]))
    w.add_block_count(blocks)
    w.add_head_count(int(config["num_attention_heads"]))
    w.add_layer_norm_eps(float(config["layer_norm_eps"]))
    w.add_causal_attention(False)
    w.add_pooling_type(gguf.PoolingType.MEAN)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("default")
    w.add_token_list([_phantom(t) for t in vocab])
    special = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
    w.add_token_types([gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL for t in vocab])
    w.add_token_type_count(int(config.get("type_vocab_size", 2)))
    index = {t: i for i, t in enumerate(vocab)}
    w.add_bos_token_id(index["[CLS]"])
    w.add_sep_token_id(index["[SEP]"])
    w.add_unk_token_id(index["[UNK]"])
    w.add_pad_token_id(index["[PAD]"])
    w.add_mask_token_id(index["[MASK]"])

    for hf_name, data in tensors.items():
        stem, _, suffix = hf_name.removeprefix("bert.").rpartition(".")
        mapped = names.get_name(stem)
        if mapped is None or data.dtype == np.int64:  # the pooler and position_ids are not used
            continue
        gg_name = f"{mapped}.{suffix}"
        data = np.ascontiguousarray(data, dtype=np.float32)
        if data.ndim == 2 and not mapped.startswith(_F32_ALWAYS) and data.shape[1] % 32 == 0:
            w.add_tensor(gg_name, gguf.quants.quantize(data, gguf.GGMLQuantizationType.Q8_0),
                         raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        else:
            w.add_tensor(gg_name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    tmp.replace(out_path)
    return out_path
