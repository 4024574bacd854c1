"""What the agent hooks keep between calls, and what they do with a turn's reply and a
session's transcript.

A hook is a new process each time: the block a prompt was given is remembered in
state/hooks/AGENT/SESSION.json (0600): the recall's id and the ids of the memories in the block,
never their words, so a purge has nothing to reach there. When the reply comes (`strata hook
reply`, or Claude Code's Stop with its transcript), the memories it cites or quotes become a
success on that recall (context/replies.py); a reply that uses none gives no feedback, as
silence says nothing about the block. At a compaction and at the end of a session, the lines
of the agent's own text that record a decision or a lesson are stored as memories of that
session, each once."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from strata_daemon.context import replies

if TYPE_CHECKING:
    from strata_daemon.app.memory import Memory

SOURCE = "agent:hook"
_SAFE = re.compile(r"^[A-Za-z0-9._-]{1,80}$")
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024


def _session_file(state_dir: Path, agent: str, session: str) -> Path:
    name = session if _SAFE.match(session) and not session.startswith(".") else \
        hashlib.sha256(session.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return state_dir / "hooks" / agent / f"{name}.json"


def read_session(state_dir: Path, agent: str, session: str) -> dict:
    try:
        state = json.loads(_session_file(state_dir, agent, session).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def write_session(state_dir: Path, agent: str, session: str, state: dict) -> None:
    """Replace the session's record (0600, its folders 0700) in one rename."""
    path = _session_file(state_dir, agent, session)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(state, f)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def given(state_dir: Path, agent: str, session: str, block: dict) -> None:
    """Remember the block a session's prompt was given: the recall and the memories' ids."""
    state = read_session(state_dir, agent, session)
    state["block"] = {"recall_id": block.get("recall_id"), "ids": [m["id"] for m in block["parts"]["memories"]]}
    write_session(state_dir, agent, session, state)


async def feedback_from(mem: "Memory", session: str, reply: str) -> dict | None:
    """The memories of the session's last block that the reply cites or quotes, recorded as a
    success on its recall; None when there is no block, no recall or nothing used."""
    state = read_session(mem.home.state_dir, mem.agent, session)
    block = state.get("block") or {}
    if not block.get("recall_id") or not block.get("ids") or block.get("answered"):
        return None
    texts = {i: m["content"] for i, m in (await mem.get_many(block["ids"])).items()}
    used = replies.used(reply, {i: texts[i] for i in block["ids"] if i in texts})
    block["answered"] = True
    write_session(mem.home.state_dir, mem.agent, session, {**state, "block": block})
    if not used:
        return None
    return await mem.feedback(block["recall_id"], "success", used=used)


def assistant_texts(transcript: Path, start: int = 0) -> tuple[list[str], int]:
    """The agent's own texts in a Claude Code transcript (JSON Lines), from line `start`, and
    the number of lines read in all."""
    texts, n = [], start
    with transcript.open("rb") as f:
        for n, raw in enumerate(_lines(f), 1):
            if n <= start:
                continue
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            message = entry.get("message") if isinstance(entry, dict) else None
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            content = message.get("content")
            parts = [content] if isinstance(content, str) else [
                c.get("text") for c in content or () if isinstance(c, dict) and c.get("type") == "text"]
            texts += [t for t in parts if isinstance(t, str) and t.strip()]
    return texts, n


def _lines(f) -> Iterator[bytes]:
    read = 0
    for raw in f:
        read += len(raw)
        if read > MAX_TRANSCRIPT_BYTES:
            return
        yield raw


async def keep_session(mem: "Memory", session: str, transcript: Path) -> dict:
    """Store what the transcript's new lines decided and learnt, as memories of the session, and
    give the last reply's feedback on the block the session was last given."""
    state = read_session(mem.home.state_dir, mem.agent, session)
    texts, read = assistant_texts(transcript, int(state.get("transcript_lines", 0)))
    stored = []
    for kind, line in replies.worth_keeping(texts):
        r = await mem.observe(line, kind=kind, session=session, source=SOURCE)
        stored.append(r["id"])
    write_session(mem.home.state_dir, mem.agent, session, {**read_session(mem.home.state_dir, mem.agent, session),
                                                           "transcript_lines": read})
    feedback = await feedback_from(mem, session, texts[-1]) if texts else None
    return {"stored": stored, "feedback": feedback}
