"""`strata context` and the hooks: a block within its budget on every face, what it holds and
leaves out, and the feedback and memories a session's hooks record. Real SQLite, the real
embedding model and tokenizer, real processes for the hooks."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import stat
import subprocess
import sys
import time

import pytest

from strata_daemon.capsule.condensed import condensed
from strata_daemon.context.pack import pack
from strata_daemon.context.replies import used, worth_keeping
from strata_daemon.embedding.tokens import counter

T0 = 1_790_000_000.0
NOTES = ["Bridge: DOWN", "TODO: migrate the nightly backup job to nas-2",
         "The nightly backup job failed on nas-1 at 03:00 after the disk filled up",
         "Alice prefers messages on Signal", "Decided to move backups to nas-2 next week"]


def test_a_block_never_exceeds_its_budget_and_says_why_it_left_things_out():
    count, rng = counter(), random.Random(7)
    words = "backup job nas disk bridge gateway Alice Signal failed restored migrated quota".split()
    for _ in range(40):
        hits = [{"id": i, "content": " ".join(rng.choices(words, k=rng.randint(1, 60))),
                 "event_at": T0 + rng.randint(0, 30) * 86400} for i in range(1, 60)]
        budget = rng.choice([32, 64, 100, 256, 512])
        p = pack(budget, count, capsule=[("Who I am", ["I am ops-bot."] * 3)],
                 facts=[{"key": "bridge", "label": "Bridge", "value": "UP", "valid_from": T0}], hits=hits)
        assert sum(count(p.lines())) == p.used <= budget
        assert {m["id"] for m in p.memories}.isdisjoint({o["id"] for o in p.left_out if o["part"] == "memories"})
    # The capsule and the facts take at most a quarter each; a repeat is left out, and why.
    p = pack(64, count, capsule=[("Rules", [f"- rule number {i} says something long enough" for i in range(9)])],
             hits=[{"id": 1, "content": "The disk on nas-1 is full", "event_at": T0},
                   {"id": 2, "content": "the disk on nas-1 is  FULL", "event_at": T0 + 86400}])
    assert sum(count(["## Rules", *p.capsule[0][1]])) <= 16
    assert [m["id"] for m in p.memories] == [1]
    assert {"part": "memories", "id": 2, "reason": "says what #1 says"} in p.left_out
    # In recall's order, each with its day; a fact a newer memory in the block updates is left out.
    p = pack(200, count, facts=[{"key": "leader", "label": "leader", "value": "node-1", "valid_from": T0}],
             hits=[{"id": 2, "content": "leader election done: node-2 is leader now", "event_at": T0 + 86400},
                   {"id": 1, "content": "leader: node-1", "event_at": T0}])
    assert p.lines() == ["## Memories (cite #id)", "#2 22 Sep 2026 leader election done: node-2 is leader now",
                         "#1 21 Sep leader: node-1"]  # the year of the line above
    assert {"part": "facts", "key": "leader", "reason": "#2 says it changed since"} in p.left_out
    # A status line all its fact says is left out, unless it ended an older hit: beside it, it is
    # what says which one is true now.
    garage = [{"id": 2, "content": "Garage door: closed", "event_at": T0 + 86400},
              {"id": 1, "content": "Garage door: open", "event_at": T0, "explain": {"superseded_by": [2]}}]
    fact = [{"key": "garage door", "label": "Garage door", "value": "closed", "valid_from": T0 + 86400}]
    assert [m["id"] for m in pack(200, count, facts=fact, hits=garage).memories] == [2, 1]
    assert [m["id"] for m in pack(200, count, facts=fact, hits=garage[:1]).memories] == []
    # ...only beside it: when the older hit falls under the relevance floor, the newer one would
    # say twice what the fact says.
    faint = [garage[0], {**garage[1], "explain": {"superseded_by": [2], "signals": {"relevance": 0.1}}}]
    p = pack(200, count, facts=fact, hits=faint, floor=0.5)
    assert [m["id"] for m in p.memories] == [] and {"part": "memories", "id": 2,
                                                    "reason": "says what the fact garage door says"} in p.left_out
    # A fact drawn from a hit that recall ranked below its newer statement is left out: no rule
    # read the newer one as its update, but recall did.
    moved = [{"id": 2, "content": "Warehouse is in ap-southeast-1 after the APAC move", "event_at": T0 + 86400},
             {"id": 1, "content": "The analytics warehouse lives in us-east-2", "event_at": T0,
              "explain": {"newer_alike": [2]}}]
    old = [{"key": "analytics warehouse.location", "label": "analytics warehouse.location", "value": "us-east-2",
            "valid_from": T0, "source": "episode:1"}]
    p = pack(200, count, facts=old, hits=moved)
    assert not p.facts and {"part": "facts", "key": "analytics warehouse.location",
                            "reason": "#2 says it changed since"} in p.left_out
    assert pack(200, count, facts=old, hits=moved[1:]).facts  # its newer statement is not in the block
    # A line of the day the line above is of leaves its day out.
    p = pack(200, count, hits=[{"id": 5, "content": "a", "event_at": T0}, {"id": 6, "content": "b", "event_at": T0 + 60}])
    assert p.lines()[1:] == ["#5 21 Sep 2026 a", "#6 b"]


def test_a_memory_longer_than_the_room_is_cut_to_fit_and_marked():
    count = counter()
    log = "backup job " + " ".join(f"step{i} ok" for i in range(400))
    hits = [{"id": 1, "content": log, "event_at": T0}, {"id": 2, "content": "The backup job failed.", "event_at": T0}]
    for budget in (32, 64, 256):
        p = pack(budget, count, hits=hits)
        assert sum(count(p.lines())) == p.used <= budget
        first = p.memories[0]
        assert first["id"] == 1 and first["cut"] and first["line"].endswith(" … [cut]")
        assert first["line"].startswith("#1 21 Sep 2026 backup job step0 ok")
    # One that would fit an empty block but not what is left is left out, as before: the next is tried.
    p = pack(64, count, hits=[{"id": 2, "content": "The backup job failed on nas-1 at night.", "event_at": T0},
                              {"id": 3, "content": " ".join(["word"] * 40), "event_at": T0}])
    assert [m["id"] for m in p.memories] == [2] and not p.memories[0]["cut"]
    assert {"part": "memories", "id": 3, "reason": "budget"} in p.left_out
    # A key in one unbroken run is cut inside the run; no room for a useful part, no cut.
    p = pack(48, count, hits=[{"id": 4, "content": "key " + "a1b2c3d4" * 500, "event_at": T0}])
    assert p.memories[0]["cut"] and p.used <= 48 and "a1b2" in p.memories[0]["line"]
    p = pack(32, count, capsule=[("Who I am", ["I am ops-bot, I keep the backups of the house."] * 3)],
             facts=[{"key": f"k{i}", "label": f"thing {i}", "value": "a long value here", "valid_from": T0}
                    for i in range(3)], hits=[{"id": 4, "content": "key " + "a1b2c3d4" * 500, "event_at": T0}])
    assert p.used <= 32


def test_the_budget_is_a_ceiling_a_memory_far_less_relevant_is_left_out():
    count = counter()
    hits = [{"id": 1, "content": "The ticket is priority P0.", "event_at": T0,
             "explain": {"signals": {"relevance": 0.9}}},
            {"id": 2, "content": "Standup moved to room Lark.", "event_at": T0, "explain": {"signals": {"relevance": 0.05}}},
            {"id": 3, "content": "A fact's own memory.", "event_at": T0, "led": True,
             "explain": {"signals": {"relevance": 0.0}}}]
    p = pack(300, count, hits=hits, floor=0.2)
    assert [m["id"] for m in p.memories] == [1, 3] and p.used < 300
    assert {"part": "memories", "id": 2, "reason": "not relevant enough"} in p.left_out
    assert [m["id"] for m in pack(300, count, hits=hits).memories] == [1, 2, 3]
    # Relevance is relative to the candidates (the second of two may be 0); a match as measured
    # of at least half the best's keeps it.
    matched = [{**hits[0], "match": 0.8}, {**hits[1], "match": 0.45}, hits[2]]
    assert [m["id"] for m in pack(300, count, hits=matched, floor=0.2).memories] == [1, 2, 3]
    matched[1]["match"] = 0.3
    assert [m["id"] for m in pack(300, count, hits=matched, floor=0.2).memories] == [1, 3]


def test_the_capsule_condensed_leaves_out_what_nobody_wrote(home):
    shipped = (home / "capsule" / "CAPSULE.md").read_text(encoding="utf-8")
    assert condensed(shipped, shipped) == []
    edited = shipped.replace("## Operational rules\n", "## Operational rules\n\n- Never reboot nas-1 during a backup.\n")
    assert condensed(edited, shipped) == [("Rules", ["- Never reboot nas-1 during a backup."])]
    # The first sentence of a shipped paragraph rewritten in its line: the rest of the paragraph,
    # shipped, leaves with it, not half a sentence.
    first = next(ln for ln in shipped.splitlines() if ln.startswith("I am "))
    rewritten = shipped.replace(first, "I am Walker, the ops agent for Alice." + first[first.index(".") + 1:])
    assert condensed(rewritten, shipped) == [("Who I am", ["I am Walker, the ops agent for Alice."])]


def test_a_reply_uses_what_it_cites_or_quotes_and_a_session_keeps_its_decisions():
    given = {12: "x", 7: "y", 4: "The nightly backup job on nas-1 failed at 03:00 again", 5: "the job"}
    assert used("As #12 says, and e7: the backup job on nas-1 failed at 03:00 again.", given) == [12, 7, 4]
    assert used("the job failed", given) == [] and used("#99 and e", given) == []
    kept = worth_keeping(["Decided to move backups to nas-2.\n- Lesson: check the disk first\nok", "Decided to move "
                          "backups to nas-2."])
    assert kept == [("decision", "Decided to move backups to nas-2."), ("lesson", "Lesson: check the disk first")]


@pytest.fixture
def lived(memory):
    for i, text in enumerate(NOTES):
        memory.observe(text, at=f"{len(NOTES) - i}h ago")
    memory.fold()
    memory.embed_pending()
    memory.render_capsule()
    return memory


def test_the_block_holds_pending_work_facts_and_memories_and_its_recall_takes_feedback(lived):
    r = lived.context("what is going on with the backup job and the bridge?", budget=200)
    assert r["tokens"] <= 200 and r["tokenizer"] == "minilm-wordpiece" and r["recall_id"]
    assert "## Pending\n- [ ] TODO: migrate the nightly backup job to nas-2" in r["block"]
    assert "## Facts\n- Bridge: DOWN (since" in r["block"]
    ids = [m["id"] for m in r["parts"]["memories"]]
    assert 3 in ids and f"{NOTES[2]}\n" in r["block"] and "\n#3 " in r["block"]
    # Said by the pending line and the fact already, or about something else: left out, with the reason.
    assert {o["id"]: o["reason"] for o in r["left_out"] if o["part"] == "memories"} == {
        1: "says what the fact bridge says", 2: "says what the pending line says", 4: "not relevant enough"}
    # Only what the block holds was shown: its access events, and what feedback reaches.
    shown = lived.sql("SELECT episode_id FROM access_events WHERE recall_id = ?", (r["recall_id"],))
    assert sorted(e["episode_id"] for e in shown) == sorted(ids)
    assert lived.feedback(r["recall_id"], "success", used=[3])["episodes"] == [3]
    quiet = lived.context("backup job", budget=64, record=False)
    assert quiet["recall_id"] is None and quiet["tokens"] <= 64
    assert len(lived.sql("SELECT id FROM recalls")) == 1


def test_the_cli_prints_the_block_or_its_parts(lived, cli):
    out = cli("context", "the backup job", "--budget", "100", check=True).out
    assert out.startswith("## Pending") and "#3 " in out
    r = cli.json("context", "-", "--budget", "48", input="the backup job")
    assert r["tokens"] <= 48 and set(r) >= {"block", "parts", "left_out", "recall_id", "tokenizer"}
    bad = cli("context", "x", "--budget", "8")
    assert bad.returncode == 4 and "budget must be between 32 and 100000, not 8" in bad.err


def _hook(home, *args, stdin: str | bytes, env=None):
    """A hook as an agent's loop runs it: a new process, its input on stdin."""
    stdin = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, "-m", "strata_daemon", "hook", *args], input=stdin,
                          capture_output=True, env={**os.environ, "STRATA_HOME": str(home), **(env or {})},
                          timeout=120)


def test_a_session_file_named_by_its_id_is_renamed_to_its_hash_and_kept(tmp_path):
    from strata_daemon.app import hooks

    folder = tmp_path / "hooks" / "default"
    folder.mkdir(parents=True)
    (folder / "deploy-acme-prod.json").write_text('{"transcript_offset": 42}', encoding="utf-8")
    assert hooks.read_session(tmp_path, "default", "deploy-acme-prod") == {"transcript_offset": 42}
    assert [p.name for p in folder.iterdir()] == [hashlib.sha256(b"deploy-acme-prod").hexdigest()[:32] + ".json"]


def test_the_hooks_give_context_record_feedback_and_keep_what_a_session_decided(lived, home, tmp_path):
    start = _hook(home, "session-start", stdin="{}")
    assert start.returncode == 0 and start.stdout.decode().startswith("# Capsule")
    prompt = _hook(home, "prompt", stdin=json.dumps({"prompt": "why did the backup job fail?", "session_id": "s-1"}))
    assert prompt.returncode == 0 and b"#3 " in prompt.stdout and b"The nightly backup job failed" in prompt.stdout
    [state] = (home / "state" / "hooks" / "default").iterdir()  # named by a hash: a session id may hold words
    assert state.name == hashlib.sha256(b"s-1").hexdigest()[:32] + ".json"
    assert stat.S_IMODE(state.stat().st_mode) == 0o600 and b"nightly" not in state.read_bytes()  # ids, no words
    transcript = tmp_path / "t.jsonl"
    reply = "The backup job failed on nas-1 at 03:00 after the disk filled up (#3).\nDecided to add a disk alert."
    transcript.write_text("\n".join(json.dumps(e) for e in (
        {"type": "user", "message": {"role": "user", "content": "why did the backup job fail?"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": reply}]}},
        "not an entry")) + "\n{broken\n", encoding="utf-8")
    stop = _hook(home, "stop", stdin=json.dumps({"session_id": "s-1", "transcript_path": str(transcript)}))
    assert stop.returncode == 0, stop.stderr
    rows = lived.sql("SELECT kind, content, session, source FROM episodes WHERE session = 's-1'")
    assert rows == [{"kind": "decision", "content": "Decided to add a disk alert.", "session": "s-1",
                     "source": "agent:hook"}]
    assert lived.get(3)["success_count"] == 1  # cited in the reply: used
    again = _hook(home, "stop", stdin=json.dumps({"session_id": "s-1", "transcript_path": str(transcript)}))
    assert again.returncode == 0 and len(lived.sql("SELECT id FROM episodes WHERE session = 's-1'")) == 1
    assert lived.get(3)["success_count"] == 1  # a reply gives its feedback once
    with transcript.open("a", encoding="utf-8") as f:  # the next turn: only its new lines are read
        f.write(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": "Lesson: watch the "
                                                                                            "disk on nas-1"}}) + "\n")
    _hook(home, "compact", "--session", "s-1", stdin=json.dumps({"transcript_path": str(transcript)}))
    assert [r["content"] for r in lived.sql("SELECT content FROM episodes WHERE session = 's-1' ORDER BY id")] == [
        "Decided to add a disk alert.", "Lesson: watch the disk on nas-1"]
    quiet = _hook(home, "stop", stdin=json.dumps({"session_id": "s-1", "transcript_path": str(transcript)}))
    assert b"kept 0 decisions and lessons of session s-1 (0 new bytes read from byte" in quiet.stderr  # and why
    other = tmp_path / "other.jsonl"  # another file under the same session, longer: read from its start
    other.write_text(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": "Decided to paint "
                                                                                                 "the rack blue."}})
                     + "\n" + json.dumps({"type": "user", "message": {"role": "user", "content": "ok " * 400}}) + "\n")
    assert other.stat().st_size > transcript.stat().st_size
    _hook(home, "stop", stdin=json.dumps({"session_id": "s-1", "transcript_path": str(other)}))
    assert "Decided to paint the rack blue." in [r["content"] for r in lived.sql("SELECT content FROM episodes")]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o700 for p in (state.parent, state.parent.parent))


def test_a_generic_loop_gets_plain_text_back_and_never_a_failed_turn(lived, home, tmp_path):
    block = _hook(home, "prompt", stdin="the backup job")
    assert block.returncode == 0 and block.stdout.startswith(b"## Pending")
    reply = _hook(home, "reply", stdin="I looked at #3 first.")
    assert reply.returncode == 0 and b"used 1 memory" in reply.stderr
    again = _hook(home, "reply", stdin=json.dumps({"last_assistant_message": "and #3 again"}))
    assert again.returncode == 0 and b"no feedback: the last block of session default has had its reply" in again.stderr
    unnamed = _hook(home, "reply", stdin=json.dumps({"session_id": "s-9", "text": "#3"}))
    assert b"no feedback: the input holds no reply (JSON input names it `reply`)" in unnamed.stderr
    for env, stdin in (({"STRATA_HOME": str(tmp_path / "nowhere")}, "the backup job"),
                       ({}, b"the backup \xff job"), ({}, "[1, 2]"), ({}, "x" * 200_000), ({}, '{"prompt": 3}')):
        r = _hook(home, "prompt", stdin=stdin, env=env)
        assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr
    assert b"#3 " in _hook(home, "prompt", stdin=b"the backup \xff job").stdout  # a bad byte, still a block
    for stdin in ("not json", json.dumps({"session_id": "s", "transcript_path": str(tmp_path)}),
                  json.dumps({"session_id": ["s"], "transcript_path": str(tmp_path / "missing.jsonl")})):
        r = _hook(home, "stop", stdin=stdin)
        assert r.returncode == 0 and b"Traceback" not in r.stderr and b"strata hook stop:" in r.stderr
        assert not re.search(rb"\b\w+(Error|Exception):", r.stderr), r.stderr  # said in words, not a class name
    assert b"cannot open the transcript" in _hook(home, "stop", stdin=json.dumps(
        {"session_id": "s", "transcript_path": str(tmp_path / "missing.jsonl")})).stderr
    printed = subprocess.run([sys.executable, "-m", "strata_daemon", "--home", str(home), "hook", "claude-code"],
                             capture_output=True, check=True).stdout
    settings = json.loads(printed)
    assert printed.startswith(b'{\n  "hooks": {') and max(map(len, printed.splitlines())) < 300  # laid out to paste
    commands = [h["command"] for event in settings["hooks"].values() for entry in event for h in entry["hooks"]]
    assert len(commands) == 4 and all(f"--home {home}" in c and " -P -m strata_daemon " in c for c in commands)
    # Claude Code runs a hook in the project's folder: a project's own json.py is not the standard one.
    project = tmp_path / "project"
    project.mkdir()
    (project / "json.py").write_text('raise SystemExit("the project json.py was imported")\n')
    prompt = next(c for c in commands if c.endswith(" hook prompt"))
    r = subprocess.run(prompt, shell=True, cwd=project, input=b"the backup job", capture_output=True, timeout=120)
    assert r.returncode == 0 and b"#3 " in r.stdout and b"project json.py" not in r.stderr, r.stderr
    # Merged into a project's settings: the person's own hooks stay, strata's are replaced.
    mine = {"type": "command", "command": "echo strata is great"}
    target = tmp_path / ".claude" / "settings.json"
    target.parent.mkdir()
    target.write_text(json.dumps({"model": "x", "hooks": {"Stop": [{"hooks": [mine]}]}}), encoding="utf-8")
    for _ in range(2):
        subprocess.run([sys.executable, "-m", "strata_daemon", "--home", str(home), "hook", "claude-code", "--write",
                        str(target)], capture_output=True, check=True)
    merged = json.loads(target.read_text(encoding="utf-8"))
    fresh = tmp_path / "new-project" / ".claude" / "settings.json"  # a folder made is said
    made = subprocess.run([sys.executable, "-m", "strata_daemon", "--home", str(home), "hook", "claude-code",
                           "--write", str(fresh)], capture_output=True, check=True)
    assert f"made the folder {fresh.parent}".encode() in made.stderr and fresh.is_file()
    assert merged["model"] == "x" and merged["hooks"]["Stop"][0]["hooks"] == [mine] and len(merged["hooks"]["Stop"]) == 2
    target.write_text("{broken", encoding="utf-8")
    broken = subprocess.run([sys.executable, "-m", "strata_daemon", "--home", str(home), "hook", "claude-code",
                             "--write", str(target)], capture_output=True)
    assert broken.returncode == 4 and b"cannot read" in broken.stderr and target.read_text() == "{broken"


def test_a_hook_exits_at_once_with_0_whatever_its_loop_gives_it(lived, home, tmp_path):
    """An agent's loop reads a hook's exit code 2 as "block the prompt": no input may cause it,
    and none may hold the turn up."""
    fifo = tmp_path / "transcript.fifo"
    os.mkfifo(fifo)  # nothing ever writes to it
    cases = [(("prompt", "--budget", bad), "the backup job") for bad in ("abc", "nan", "1e9", "")]
    cases += [(("prompt", "--mode", "nope"), "the backup job"), (("prompt", "--no-such-flag"), "x"), (("promt",), "x"),
              (("compact",), json.dumps({"session_id": "s", "transcript_path": str(fifo)})),
              (("stop",), json.dumps({"session_id": "s", "transcript_path": "/dev/zero"}))]
    for args, stdin in cases:
        started = time.monotonic()
        r = _hook(home, *args, stdin=stdin)
        assert r.returncode == 0 and b"Traceback" not in r.stderr and time.monotonic() - started < 30, (args, r.stderr)
    assert b"is not a regular file" in _hook(home, "compact", stdin=cases[-2][1]).stderr
    # A lone surrogate escaped in the hook's JSON reads as U+FFFD: the block is still given.
    r = _hook(home, "prompt", stdin='{"prompt": "the backup \\ud800 job", "session_id": "s-2"}')
    assert r.returncode == 0 and b"#3 " in r.stdout, r.stderr
    r = _hook(home, "prompt", stdin='{"prompt": 42}')  # no block, and a word why
    assert (r.returncode, r.stdout) == (0, b"") and b"the event's prompt is a number, not text" in r.stderr


def test_one_long_unbroken_word_costs_its_length_not_one_token(memory, cli):
    """WordPiece reads a word of over 100 characters as one token: a 60 KB key would ride into
    every block under a budget of 32."""
    key = memory.observe("deploy key " + "a1b2c3d4" * 7500)["id"]
    memory.observe("The deploy key was rotated on gw-02.")
    r = cli.json("context", "deploy key", "--budget", "64")
    assert r["tokens"] <= 64 and len(r["block"]) < 1000
    # Longer than all the room the memories have: cut to what is left, and marked, not dropped.
    cut = [m for m in r["parts"]["memories"] if m["id"] == key]
    assert cut and cut[0]["cut"] and f"#{key} " in r["block"] and "a1b2c3d4 … [cut]" not in r["block"]
    assert "… [cut]" in r["block"]
    hooked = _hook(cli.home, "prompt", "--budget", "64", stdin="deploy key")
    assert hooked.returncode == 0 and len(hooked.stdout) < 1000


def test_a_long_prompt_is_searched_whole_by_its_rarest_words_and_a_cut_is_said(lived, home):
    pasted = " ".join(f"line{i} ok" for i in range(4000))  # a log of 40 KB: the question at its end
    r = _hook(home, "prompt", stdin=pasted + " why did the nightly backup job fail?")
    assert r.returncode == 0 and b"The nightly backup job failed" in r.stdout, r.stderr
    assert b"recall searches at most 32" in r.stderr
    r = _hook(home, "prompt", stdin="the backup job " + pasted * 2)
    assert r.returncode == 0 and b"its first 65,536 were searched" in r.stderr


def _closed(fd: int):
    """A preexec function closing FD in the child: the loop ran the hook with `>&-` or `2>&-`."""
    return lambda: os.close(fd)


def test_a_hook_exits_0_with_a_stream_closed_bytes_not_text_or_a_kernel_file_as_transcript(home, tmp_path):
    """Each was an exit other than 0 (120, 1, 4) or an OSError's own words: the stdout or stderr
    a loop closed, an argument of bytes that are not UTF-8, /proc/self/mem as the transcript."""
    env = {**os.environ, "STRATA_HOME": str(home)}
    for args, stdin, fd in ((["prompt"], b"the backup job", 1), (["session-start"], b"", 1),
                            (["stop"], b'{"transcript_path": "/nowhere"}', 2), (["prompt"], b"the backup job", 2)):
        r = subprocess.run([sys.executable, "-m", "strata_daemon", "hook", *args], input=stdin, env=env,
                           stdout=subprocess.DEVNULL if fd == 2 else None, stderr=subprocess.PIPE if fd == 1 else None,
                           preexec_fn=_closed(fd), timeout=120)
        assert r.returncode == 0, (args, fd, r.stderr)
        assert fd == 2 or b"Traceback" not in r.stderr, r.stderr
    r = _hook(home, "prompt", "--session", os.fsdecode(b"s-\xff"), stdin="the backup job")
    assert r.returncode == 0 and b"--session is not valid UTF-8 text" in r.stderr, r.stderr
    for transcript, said in (("/proc/self/mem", b"cannot read the transcript"), ("a\u0000b", b"cannot open"),
                             (str(tmp_path / "missing.jsonl"), b"No such file")):
        r = _hook(home, "stop", stdin=json.dumps({"session_id": "s", "transcript_path": transcript}))
        assert r.returncode == 0 and said in r.stderr and b"Error" not in r.stderr, r.stderr
    deep = _hook(home, "prompt", stdin=b"[" * 100_000 + b"]" * 100_000)  # plain text, not a RecursionError
    assert deep.returncode == 0 and b"RecursionError" not in deep.stderr, deep.stderr


def test_claude_code_settings_are_merged_only_into_a_regular_file_read_bounded(home, tmp_path):
    """/dev/zero as the settings file was read for ever, its memory growing."""
    fifo = tmp_path / "settings.fifo"
    os.mkfifo(fifo)
    for target in ("/dev/zero", str(fifo), "/proc/self/mem", ""):
        r = subprocess.run([sys.executable, "-m", "strata_daemon", "--home", str(home), "hook", "claude-code",
                            "--write", target], capture_output=True, timeout=60)
        assert r.returncode == 4 and r.stdout == b"" and b"Traceback" not in r.stderr, (target, r.stderr)
