"""Which of a namespace's sources a question names. Pure: no I/O.

A memory's source is who or what it came from: a person in a conversation, `user`, `agent`,
a tool. A question that names one ("What has Melanie bought?") mostly wants what that source
said: in LoCoMo's conversations 96% of the evidence of a question naming one speaker is that
speaker's own turns, while a turn naming them ("Yep, Melanie!") is someone else talking.

A source named as the one spoken to is not who the question is about: "What book did Caroline
recommend to Melanie?" wants what Caroline said (in LoCoMo, questions naming both speakers
hold 12% of their evidence in the addressed one's turns), and "what did I tell the agent?"
wants what the person said, not the agent.
"""

from __future__ import annotations

import re
from typing import Iterable

from strata_daemon.store.fts_query import STOPWORDS

# Words after which a name is the one spoken to or given to. Alone ("important to Caroline",
# "what happened to Maria's job") such a name is still what the question is about, so these
# only set an addressed source aside when another named source remains.
_TOWARDS = re.compile(r"(?<!\w)(?:to|for|with|tells?|told|telling|asks?|asked|asking|gives?|gave|giving"
                      r"|shows?|showed|sends?|sent|reminds?|reminded|invites?|invited|thanks?|thanked"
                      r"|helps?|helped|encourages?|encouraged|teach|teaches|taught)\s+(?:the\s+)?$")
# After these a name is the one spoken to even when it is the only one named.
_SPOKEN_TO = re.compile(r"(?<!\w)(?:tells?|told|telling|asks?|asked|asking|reminds?|reminded)\s+(?:the\s+)?$")


def _mentions(source: str, lowered: str) -> list[re.Match]:
    return list(re.finditer(r"(?<!\w)" + re.escape(source.lower()) + r"(?!\w)", lowered))


def named_sources(query: str, sources: Iterable[str | None]) -> set[str]:
    """The sources that the query names as a whole word or phrase, in any case ("Melanie's"
    names Melanie), and not only as the one spoken to; a one-letter source or a stopword never."""
    lowered = query.lower()
    # The plain substring test first: a home whose memories each have their own source (a
    # path, a URL) would otherwise compile a pattern per candidate on every recall.
    mentions = {s: m for s in sources
                if isinstance(s, str) and len(s.strip()) >= 2 and s.lower() in lowered
                and s.lower() not in STOPWORDS and (m := _mentions(s, lowered))}

    def only(pattern: re.Pattern, s: str) -> bool:
        return all(pattern.search(lowered, 0, m.start()) for m in mentions[s])

    named = {s for s in mentions if not only(_SPOKEN_TO, s)}
    about = {s for s in named if not only(_TOWARDS, s)}
    return about or named
