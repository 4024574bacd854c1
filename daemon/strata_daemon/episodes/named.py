"""Which of a namespace's sources a question names. Pure: no I/O.

A memory's source is who or what it came from: a person in a conversation, `user`, `agent`,
a tool. A question that names one ("What has Melanie bought?") mostly wants what that source
said: in LoCoMo's conversations 96% of the evidence of a question naming one speaker is that
speaker's own turns, while a turn naming them ("Yep, Melanie!") is someone else talking.
"""

from __future__ import annotations

import re
from typing import Iterable

from .fts import STOPWORDS


def named_sources(query: str, sources: Iterable[str | None]) -> set[str]:
    """The sources that the query names as a whole word or phrase, in any case ("Melanie's"
    names Melanie); a one-letter source or a stopword never."""
    lowered = query.lower()
    # The plain substring test first: a home whose memories each have their own source (a
    # path, a URL) would otherwise compile a pattern per candidate on every recall.
    return {s for s in sources if isinstance(s, str) and len(s.strip()) >= 2 and s.lower() in lowered
            and s.lower() not in STOPWORDS and re.search(r"(?<!\w)" + re.escape(s.lower()) + r"(?!\w)", lowered)}
