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
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from strata_daemon.base.private import private_folder, write_private
from strata_daemon.base.wording import quoted
from strata_daemon.context import replies
from strata_daemon.errors import InvalidInput

if TYPE_CHECKING:
    from strata_daemon.app.memory import Memory

SOURCE = "agent:hook"
_SAFE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,79}$")
# What one Stop or PreCompact reads of a transcript: a turn's new lines are far less; a session
# that outgrew this since the last hook is read on in later calls.
READ_BYTES = 8 * 1024 * 1024


def _session_file(state_dir: Path, agent: str, session: str) -> Path:
    """A session's file is named by a hash of its id: an id may hold words (`deploy-acme-prod`),
    and a name outlives every purge."""
    return state_dir / "hooks" / agent / f"{hashlib.sha256(session.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}.json"


def read_session(state_dir: Path, agent: str, session: str) -> dict:
    path = _session_file(state_dir, agent, session)
    named = path.with_name(f"{session}.json")  # named by the id itself, as strata did before
    if _SAFE.match(session) and named != path and named.is_file() and not path.exists():
        named.replace(path)
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def write_session(state_dir: Path, agent: str, session: str, state: dict) -> None:
    path = _session_file(state_dir, agent, session)
    private_folder(path.parent, state_dir)
    write_private(path, json.dumps(state))


def given(state_dir: Path, agent: str, session: str, block: dict) -> None:
    """Remember the block a session's prompt was given: the recall and the memories' ids."""
    state = read_session(state_dir, agent, session)
    state["block"] = {"recall_id": block.get("recall_id"), "ids": [m["id"] for m in block["parts"]["memories"]]}
    write_session(state_dir, agent, session, state)


async def feedback_from(mem: "Memory", session: str, reply: str) -> dict:
    """The memories of the session's last block that the reply cites or quotes, recorded as a
    success on its recall, once. Without feedback, `none` says why."""
    state = read_session(mem.home.state_dir, mem.agent, session)
    block = state.get("block") or {}
    if not reply.strip():
        return {"none": "the input holds no reply"}
    if not block.get("recall_id") or not block.get("ids"):
        return {"none": f"no context block was given in session {session}"}
    if block.get("answered"):
        return {"none": f"the last block of session {session} has had its reply"}
    texts = {i: m["content"] for i, m in (await mem.get_many(block["ids"])).items()}
    used = replies.used(reply, {i: texts[i] for i in block["ids"] if i in texts})
    write_session(mem.home.state_dir, mem.agent, session, {**state, "block": {**block, "answered": True}})
    if not used:
        return {"none": f"the reply cites or quotes none of the {len(block['ids'])} memories of recall "
                        f"{block['recall_id']}"}
    return await mem.feedback(block["recall_id"], "success", used=used)


def assistant_texts(transcript: Path, offset: int = 0) -> tuple[list[str], int]:
    """The agent's own texts in the whole lines of a Claude Code transcript (JSON Lines) after
    byte `offset`, at most READ_BYTES of them, and the offset after the last line read. A
    transcript shorter than the offset is a new one, read from its start."""
    # Opened without waiting and read only when it is a file: a FIFO or a device named as the
    # transcript would hold the agent's turn until something wrote to it.
    try:
        fd = os.open(transcript, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError) as e:  # ValueError: a NUL, or bytes that are not UTF-8, in the path
        raise InvalidInput(f"cannot open the transcript {quoted(str(transcript))}: "
                           f"{getattr(e, 'strerror', None) or 'not a path'}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InvalidInput(f"the transcript {quoted(str(transcript))} is not a regular file")
    with os.fdopen(fd, "rb") as f:
        try:
            if f.seek(0, os.SEEK_END) < offset:
                offset = 0
            f.seek(offset)
            chunk = f.read(READ_BYTES)
        except OSError as e:  # a file of the kernel's (/proc/self/mem) that is no text to read
            raise InvalidInput(f"cannot read the transcript {quoted(str(transcript))}: {e.strerror}") from None
    whole = chunk[:chunk.rfind(b"\n") + 1]
    texts = []
    for raw in whole.splitlines():
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        parts = [content] if isinstance(content, str) else [
            c.get("text") for c in content if isinstance(c, dict) and c.get("type") == "text"] \
            if isinstance(content, list) else []
        texts += [t for t in parts if isinstance(t, str) and t.strip()]
    return texts, offset + len(whole)


async def keep_session(mem: "Memory", session: str, transcript: Path) -> dict:
    """Store what the transcript's new lines decided and learnt, as memories of the session, and
    give the feedback of the agent's new text on the block the session was last given. A line
    strata refuses (too long, a NUL) is passed over; the transcript is read on from where this
    call ended either way."""
    state = read_session(mem.home.state_dir, mem.agent, session)
    # Another file under the same session is read from its start, not from the last one's end; the
    # file is kept as a hash of its path, which may hold words (a project's name).
    named = hashlib.sha256(str(transcript).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    start = int(state.get("transcript_offset", 0)) if state.get("transcript") in (None, named) else 0
    texts, offset = assistant_texts(transcript, start)
    stored = []
    for kind, line in replies.worth_keeping(texts):
        try:
            stored.append((await mem.observe(line, kind=kind, session=session, source=SOURCE))["id"])
        except InvalidInput:
            continue
    write_session(mem.home.state_dir, mem.agent, session,
                  {**read_session(mem.home.state_dir, mem.agent, session), "transcript_offset": offset,
                   "transcript": named})
    feedback = await feedback_from(mem, session, "\n".join(texts))
    return {"stored": stored, "feedback": None if "none" in feedback else feedback, "read_from": start,
            "bytes_read": offset - min(start, offset), "agent_texts": len(texts)}
