"""An independent oracle for the all-mpnet-base-v2 tests: MPNet in plain numpy on the original
safetensors weights, written from the transformers implementation (RoBERTa-style positions,
a bucketed relative position bias shared by all layers, post-norm BERT layers), mean-pooled.
Slow and simple; it shares no code with the ONNX graph it checks. Token ids come from the
shipped tokenizer.json: it is the network that is under test."""

from __future__ import annotations

import json
import math

import numpy as np


def _bucket(relative: np.ndarray, buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    ret = np.zeros_like(relative)
    n = -relative
    buckets //= 2
    ret += (n < 0) * buckets
    n = np.abs(n)
    max_exact = buckets // 2
    small = n < max_exact
    large = np.array([max_exact + int(math.log(v / max_exact) / math.log(max_distance / max_exact)
                                      * (buckets - max_exact)) if v >= max_exact else 0 for v in n.ravel()])
    large = np.minimum(large.reshape(n.shape), buckets - 1)
    return ret + np.where(small, n, large)


class ReferenceMPNet:
    def __init__(self, weights: dict[str, np.ndarray], config: dict, tokenizer_json: bytes, context: int = 384):
        from tokenizers import Tokenizer

        self.cfg = config
        self.w = {k: v.astype(np.float32) for k, v in weights.items() if v.dtype != np.int64}
        self.tokenizer = Tokenizer.from_str(tokenizer_json.decode())
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(context)

    def _ln(self, x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.cfg["layer_norm_eps"]) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def _lin(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def embed(self, text: str) -> np.ndarray:
        ids = self.tokenizer.encode(text).ids
        w, heads, n = self.w, self.cfg["num_attention_heads"], len(ids)
        positions = np.arange(n) + 2  # padding_idx 1, counting from padding_idx + 1
        x = self._ln(w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][positions],
                     "embeddings.LayerNorm")
        steps = np.arange(n)
        bias = w["encoder.relative_attention_bias.weight"][_bucket(steps[None, :] - steps[:, None])]  # (n, n, heads)
        bias = bias.transpose(2, 0, 1)
        d = x.shape[1] // heads
        erf = np.vectorize(math.erf)
        for i in range(self.cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            q, k, v = (self._lin(x, p + f"attention.attn.{m}").reshape(n, heads, d).transpose(1, 0, 2)
                       for m in ("q", "k", "v"))
            att = q @ k.transpose(0, 2, 1) / math.sqrt(d) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(1, 0, 2).reshape(n, -1)
            x = self._ln(x + self._lin(ctx, p + "attention.attn.o"), p + "attention.LayerNorm")
            h = self._lin(x, p + "intermediate.dense")
            h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
            x = self._ln(x + self._lin(h, p + "output.dense"), p + "output.LayerNorm")
        pooled = x.mean(0)
        return pooled / np.linalg.norm(pooled)


def load(read_packaged) -> ReferenceMPNet:
    from strata_daemon.embedding.convert import parse_safetensors

    files = read_packaged()
    return ReferenceMPNet(parse_safetensors(files["model.safetensors"], "model.safetensors"),
                          json.loads(files["config.json"]), files["tokenizer.json"])
