"""`strata context`: the block for one turn within a token budget; `strata hook`: the same,
wired into an agent's loop (Claude Code's hooks, or any loop that can run a command), with the
feedback a reply gives and what a session decided and learnt.

A hook never fails the agent's turn: whatever goes wrong (no home, a locked database, bad
input), it prints what it can (maybe nothing), says why on stderr, and exits 0."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

from strata_daemon.config.settings import MODES
from strata_daemon.faces.cli import daemon
from strata_daemon.faces.cli.memory_cmds import opened
from strata_daemon.faces.cli.output import emit, note
from strata_daemon.faces.cli.parsers import adder, integer

COMMANDS = ("context", "hook")
GENERIC_SESSION = "default"
EVENTS = (("SessionStart", "session-start"), ("UserPromptSubmit", "prompt"), ("PreCompact", "compact"),
          ("Stop", "stop"))


async def _block(args, text: str) -> dict:
    result = daemon.context(args, text)  # the daemon has the model loaded
    if result is None:
        async with opened(args) as mem:
            result = await mem.context(text, budget=args.budget, mode=args.mode)
    return result


async def cmd_context(args) -> int:
    text = sys.stdin.read() if args.text == "-" else args.text
    emit(await _block(args, text), args.json, lambda r: r["block"].rstrip("\n"))
    return 0


def _stdin() -> tuple[str, dict]:
    """The hook's input: Claude Code's JSON (`prompt`, `session_id`, `transcript_path`), or
    plain text from any other loop."""
    raw = sys.stdin.read()
    try:
        event = json.loads(raw)
    except ValueError:
        return raw, {}
    return (event.get("prompt") or "", event) if isinstance(event, dict) else (raw, {})


def _never_fails(handler):
    async def guarded(args) -> int:
        try:
            await handler(args)
        except Exception as e:  # the agent's turn goes on without its memory
            message = getattr(e, "message", None) or f"{type(e).__name__}: {e}"
            note(f"strata hook {args.hook_command}: {message} (the agent's turn goes on without it)")
        return 0
    return guarded


async def hook_prompt(args) -> None:
    text, event = _stdin()
    session = args.session or event.get("session_id") or GENERIC_SESSION
    if not text.strip():
        return
    result = await _block(args, text)
    sys.stdout.write(result["block"])
    if result.get("recall_id"):
        from strata_daemon.app import hooks
        from strata_daemon.config.home import resolve_home

        hooks.given(resolve_home(args.home).state_dir, result["agent"], session, result)


async def hook_session_start(args) -> None:
    async with opened(args) as mem:
        text = mem.capsule.read_text()
    if text:
        sys.stdout.write(text)


async def hook_reply(args) -> None:
    from strata_daemon.app import hooks

    text, event = _stdin()
    async with opened(args, actor="hook") as mem:
        r = await hooks.feedback_from(mem, args.session or event.get("session_id") or GENERIC_SESSION, text)
    if r is not None:
        note(f"strata: the reply used {len(r['used'])} memories of recall {r['recall_id']}")


async def hook_session_end(args) -> None:
    from strata_daemon.app import hooks

    _, event = _stdin()
    transcript, session = event.get("transcript_path"), event.get("session_id")
    if not transcript or not session:
        raise ValueError("no session_id and transcript_path on stdin (Claude Code's hook input)")
    async with opened(args, actor="hook") as mem:
        r = await hooks.keep_session(mem, str(session), Path(transcript))
    note(f"strata: kept {len(r['stored'])} decisions and lessons of session {session}")


def _claude_settings(args) -> dict:
    exe = shutil.which("strata") or str(Path(sys.executable).with_name("strata"))
    base = [exe, *(["--home", args.home] if args.home else []), *(["--agent", args.agent] if args.agent else [])]
    return {"hooks": {event: [{"hooks": [{"type": "command", "command": shlex.join([*base, "hook", name])}]}]
                      for event, name in EVENTS}}


async def hook_claude_code(args) -> int:
    settings = _claude_settings(args)
    if not args.write:
        emit(settings, True)
        return 0
    path = Path(args.write)
    current = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    hooks = current.setdefault("hooks", {})
    for event, entries in settings["hooks"].items():
        kept = [e for e in hooks.get(event, []) if "strata" not in json.dumps(e)]
        hooks[event] = kept + entries
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(current, indent=2) + "\n", encoding="utf-8")
    note(f"strata: wrote its hooks for {', '.join(e for e, _ in EVENTS)} into {path}")
    return 0


def register(sub, common) -> None:
    add = adder(sub, common)
    p = add("context", cmd_context, "The block for one turn within a token budget: the capsule condensed, the facts "
                                    "the text names, the best memories (each with its id and day).")
    p.add_argument("text", help="what the agent is about to do, or was asked (- reads stdin)")
    p.add_argument("--budget", type=integer, help="tokens (default context.budget)")
    p.add_argument("--mode", choices=MODES, help="as for recall (default: the arena's choice, or recall.mode)")
    p.add_argument("--no-daemon", action="store_true", help="build it in this process even when a daemon serves")

    top = sub.add_parser("hook", parents=[common], help="Hooks for an agent's loop (Claude Code or any other).",
                         description="Commands an agent's loop runs at its turns. They read the hook's input on "
                                     "stdin (Claude Code's JSON, or plain text) and always exit 0: an agent's turn "
                                     "never fails because its memory did. docs/guide.md#agents shows the wiring.")
    hs = top.add_subparsers(dest="hook_command", metavar="EVENT", required=True)
    hadd = adder(hs, common)
    for name, handler, text in (
            ("prompt", hook_prompt, "Print the context block for the prompt on stdin (and remember what it gave)."),
            ("session-start", hook_session_start, "Print the capsule."),
            ("reply", hook_reply, "Read the agent's reply on stdin: the memories it cites or quotes become "
                                  "feedback on the block its prompt was given."),
            ("compact", hook_session_end, "Keep the decisions and lessons of the transcript so far (Claude Code's "
                                          "PreCompact), and the last reply's feedback."),
            ("stop", hook_session_end, "The same at the end of a turn or session (Claude Code's Stop).")):
        p = hadd(name, _never_fails(handler), text)
        p.add_argument("--session", help=f"the session (default: the input's session_id, else {GENERIC_SESSION})")
        if name == "prompt":
            p.add_argument("--budget", type=integer, help="tokens (default context.budget)")
            p.add_argument("--mode", choices=MODES, help="as for recall")
    p = hadd("claude-code", hook_claude_code, "Print Claude Code's hook settings for this home, or merge them into "
                                              "a settings file (--write .claude/settings.json).")
    p.add_argument("--write", metavar="FILE", help="merge into this settings file (strata's earlier entries replaced)")
