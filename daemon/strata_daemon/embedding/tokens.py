"""The ruler a context budget is measured with: the packaged MiniLM's WordPiece tokenizer,
without truncation. One ruler for every block strata hands out and every benchmark that counts
tokens; an LLM's own tokenizer counts within about a tenth of it on English."""

from __future__ import annotations

import functools
from typing import Callable, Sequence

NAME = "minilm-wordpiece"


@functools.cache
def counter() -> Callable[[Sequence[str]], list[int]]:
    """Tokens per text. Raises EmbeddingUnavailable when the packaged model is not installed."""
    from tokenizers import Tokenizer

    from strata_daemon.embedding.model import packaged_source
    from strata_daemon.embedding.onnx import TOKENIZER_SHA256

    tokenizer = Tokenizer.from_file(str(packaged_source({"tokenizer.json": TOKENIZER_SHA256}) / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return lambda texts: [len(e.ids) for e in tokenizer.encode_batch(list(texts), add_special_tokens=False)]
