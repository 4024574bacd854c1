"""The ruler a context budget is measured with: the packaged MiniLM's WordPiece tokenizer,
without truncation. One ruler for every block strata hands out and every benchmark that counts
tokens; an LLM's own tokenizer counts within about a tenth of it on English."""

from __future__ import annotations

import functools
import re
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
    return lambda texts: [len(e.ids) + _unbroken(t) for t, e in
                          zip(texts, tokenizer.encode_batch(list(texts), add_special_tokens=False))]


# WordPiece reads a word of more than 100 characters as one unknown token, so a 60 KB hex
# string would cost one token of a budget. An LLM's tokenizer cuts such a run into pieces of a
# few characters: it is counted as one token per CHARS_PER_PIECE characters.
_UNBROKEN = re.compile(r"\w{101,}")
CHARS_PER_PIECE = 3


def _unbroken(text: str) -> int:
    """The tokens WordPiece leaves uncounted in TEXT's runs of more than 100 word characters."""
    return sum(-(-len(run) // CHARS_PER_PIECE) - 1 for run in _UNBROKEN.findall(text)) if len(text) > 100 else 0
