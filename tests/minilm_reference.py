"""An independent oracle for the embedding tests: BERT in plain numpy on the original
safetensors weights, with BERT's uncased WordPiece tokenizer. Slow, simple, and shares no
code with the llama.cpp path it checks."""

from __future__ import annotations

import json
import math
import unicodedata
from pathlib import Path

import numpy as np

from strata_daemon.embedding.convert import read_safetensors


def _basic_tokens(text: str) -> list[str]:
    text = unicodedata.normalize("NFD", text.lower())
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    out, word = [], ""
    for ch in text:
        cat = unicodedata.category(ch)
        if ch.isspace():
            out.append(word)
            word = ""
        elif cat.startswith("P") or (33 <= ord(ch) <= 47) or (58 <= ord(ch) <= 64) or (91 <= ord(ch) <= 96) \
                or (123 <= ord(ch) <= 126):
            out += [word, ch]
            word = ""
        else:
            word += ch
    out.append(word)
    return [w for w in out if w]


def wordpiece(text: str, vocab: dict[str, int], max_len: int = 512) -> list[int]:
    ids = [vocab["[CLS]"]]
    for word in _basic_tokens(text):
        start, pieces = 0, []
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in vocab:
                    pieces.append(vocab[piece])
                    break
                end -= 1
            if end == start:
                pieces = [vocab["[UNK]"]]
                break
            start = end
        ids += pieces
    return ids[: max_len - 1] + [vocab["[SEP]"]]


class ReferenceMiniLM:
    def __init__(self, model_dir: Path):
        self.cfg = json.loads((model_dir / "config.json").read_text())
        self.w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in
                  read_safetensors(model_dir / "model.safetensors").items() if v.dtype != np.int64}
        self.vocab = {t: i for i, t in enumerate((model_dir / "vocab.txt").read_text().splitlines())}

    def _ln(self, x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.cfg["layer_norm_eps"]) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def _lin(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def embed(self, text: str) -> np.ndarray:
        ids = wordpiece(text, self.vocab)
        w, heads = self.w, self.cfg["num_attention_heads"]
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][: len(ids)] \
            + w["embeddings.token_type_embeddings.weight"][0]
        x = self._ln(x, "embeddings.LayerNorm")
        d = x.shape[1] // heads
        erf = np.vectorize(math.erf)
        for i in range(self.cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            q, k, v = (self._lin(x, p + f"attention.self.{n}").reshape(len(ids), heads, d).transpose(1, 0, 2)
                       for n in ("query", "key", "value"))
            att = q @ k.transpose(0, 2, 1) / math.sqrt(d)
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(1, 0, 2).reshape(len(ids), -1)
            x = self._ln(x + self._lin(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            h = self._lin(x, p + "intermediate.dense")
            h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
            x = self._ln(x + self._lin(h, p + "output.dense"), p + "output.LayerNorm")
        pooled = x.mean(0)
        return pooled / np.linalg.norm(pooled)
