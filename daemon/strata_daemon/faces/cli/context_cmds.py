"""`strata context`: the block for one turn within a token budget; `strata hook`: the same,
wired into an agent's loop (Claude Code's hooks, or any loop that can run a command), with the
feedback a reply gives and what a session decided and learnt.

A hook never fails the agent's turn: whatever goes wrong (no home, a locked database, bad
input), it prints what it can (maybe nothing), says why on stderr, and exits 0."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from strata_daemon.base import bounded
from strata_daemon.base.wording import counted
from strata_daemon.config.home import resolve_home
from strata_daemon.config.settings import MODES
from strata_daemon.errors import InvalidInput, StrataError, shortened
from strata_daemon.faces.cli import daemon
from strata_daemon.faces.cli.memory_cmds import opened
from strata_daemon.faces.cli.output import emit, note
from strata_daemon.faces.cli.parsers import adder, integer

COMMANDS = ("context", "hook")
SETTINGS_BYTES = 4 * 1024 * 1024  # a settings file `hook claude-code --write` merges into: far more than any
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
    result = await _block(args, text)
    if not args.json:  # stdout is the block an agent reads: what a person should know goes beside it
        for warning in result.get("warnings", ()):
            note(f"strata: warning: {warning}")
    emit(result, args.json, lambda r: r["block"].rstrip("\n"), wrap=False)
    return 0


# What of a prompt is looked for: recall takes at most store.max_content_bytes (64 KiB, the
# default) and searches a long text by its rarest words; a longer prompt is cut to that, and the
# hook says so on stderr.
PROMPT_BYTES = 64 * 1024


def _stdin(field: str) -> tuple[str, dict]:
    """The hook's input: Claude Code's JSON (FIELD, `session_id`, `transcript_path`), or plain
    text from any other loop; bytes that are not UTF-8 read as U+FFFD."""
    raw = (sys.stdin.buffer.read() if sys.stdin is not None else b"").decode("utf-8", "replace")
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python reads: plain text
        return raw, {}
    if not isinstance(event, dict):
        return raw, {}
    text = event.get(field)
    # JSON may escape a lone surrogate (`"\ud800"`), which no UTF-8 text holds: it reads as U+FFFD.
    return (text.encode("utf-16", "surrogatepass").decode("utf-16", "replace") if isinstance(text, str) else ""), event


def _session(args, event: dict) -> str:
    return str(args.session or event.get("session_id") or GENERIC_SESSION)


def _never_fails(handler):
    async def guarded(args) -> int:
        try:
            await handler(args)
        except Exception as e:  # the agent's turn goes on without its memory
            message = getattr(e, "message", None) or (
                f"{e.strerror}" + (f": {e.filename}" if e.filename else "") if isinstance(e, OSError) and e.strerror
                else f"unexpected error ({type(e).__name__}: {e})")
            note(f"strata hook {args.hook_command}: {message} (the agent's turn goes on without it)")
        return 0
    return guarded


async def hook_prompt(args) -> None:
    text, event = _stdin("prompt")
    if not text.strip():
        if event.get("prompt") is not None and not isinstance(event["prompt"], str):
            kind = {bool: "true or false", int: "a number", float: "a number", list: "a list", dict: "an object"}.get(
                type(event["prompt"]), "something else")
            note(f"strata hook prompt: the event's prompt is {kind}, not text "
                 "(the agent's turn goes on without its memory)")
        return
    raw = text.encode("utf-8")
    if len(raw) > PROMPT_BYTES:
        note(f"strata hook prompt: the prompt is {len(raw):,} bytes; its first {PROMPT_BYTES:,} were searched")
    result = await _block(args, raw[:PROMPT_BYTES].decode("utf-8", "ignore"))
    for warning in result.get("warnings", ()):
        note(f"strata hook prompt: {warning}")
    sys.stdout.write(result["block"])
    if result.get("recall_id"):
        from strata_daemon.app import hooks

        hooks.given(resolve_home(args.home).state_dir, result["agent"], _session(args, event), result)


async def hook_session_start(args) -> None:
    """The capsule; while the file has errors, strata's newest good render of it, said on stderr."""
    async with opened(args) as mem:
        r = await mem.show_capsule()
        if r.get("example"):  # no capsule yet: nothing to read first
            return
        if not r["ok"]:
            errors = counted(sum(p["level"] == "error" for p in r["problems"]), "error")
            try:
                good = await mem.show_capsule(last_good=True)
            except StrataError:
                note(f"strata hook session-start: {r['path']} has {errors} (`strata capsule check` lists them) "
                     "and no good render is kept; the agent was given it as it is")
            else:
                note(f"strata hook session-start: {r['path']} has {errors} (`strata capsule check` lists them); "
                     f"the agent was given strata's newest good render ({good['path']})")
                r = good
    sys.stdout.write(r["text"])


async def hook_reply(args) -> None:
    from strata_daemon.app import hooks

    text, event = _stdin("reply")
    if event and not text:  # loops name the reply differently
        last = event.get("last_assistant_message")
        text = last if isinstance(last, str) else ""
    async with opened(args, actor="hook") as mem:
        r = await hooks.feedback_from(mem, _session(args, event), text)
    if "none" in r:
        note(f"strata hook reply: no feedback: {r['none']}"
             + (" (JSON input names it `reply`)" if event and not text else ""))
    else:
        note(f"strata: the reply used {counted(len(r['used']), 'memory')} of recall {r['recall_id']}")


async def hook_session_end(args) -> None:
    from strata_daemon.app import hooks

    _, event = _stdin("transcript_path")
    transcript = event.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        raise InvalidInput("no transcript_path on stdin: this hook reads Claude Code's hook input, "
                           '{"session_id": ..., "transcript_path": ...}')
    session = _session(args, event)
    async with opened(args, actor="hook") as mem:
        r = await hooks.keep_session(mem, session, Path(transcript))
    where = f" from byte {r['read_from']}, where this session's last call ended" if r["read_from"] else ""
    why = "" if r["stored"] else (f" ({counted(r['bytes_read'], 'new byte')} read{where}: "
                                  f"{counted(r['agent_texts'], 'text')} of the agent's in Claude Code's JSON Lines, "
                                  "none a decision or a lesson)")
    kept = counted(len(r["stored"]), "decision or lesson", "decisions and lessons")
    note(f"strata: kept {kept} of session {session}{why}")


def _hook_command(args, name: str) -> str:
    """The command Claude Code runs: this interpreter and this home, whatever folder it runs in."""
    home = str(resolve_home(args.home).root.resolve())
    # -P: Claude Code runs hooks in the project's folder, and `-m` would put it first on sys.path,
    # so a project's own json.py or http.py would be imported in place of the standard module.
    return shlex.join([sys.executable, "-P", "-m", "strata_daemon", "--home", home,
                       *(["--agent", args.agent] if args.agent else []), "hook", name])


def _ours(entry) -> bool:
    """Whether a settings entry is one strata wrote (its command runs `strata_daemon ... hook`)."""
    return isinstance(entry, dict) and any(
        isinstance(h, dict) and "strata_daemon" in str(h.get("command", "")) and " hook " in str(h.get("command", ""))
        for h in entry.get("hooks") or [])


async def hook_claude_code(args) -> int:
    settings = {"hooks": {event: [{"hooks": [{"type": "command", "command": _hook_command(args, name)}]}]
                          for event, name in EVENTS}}
    if args.write is None:  # `--write ""` names no file, and is refused as one
        # Laid out as a settings file is (one line with --json, for programs): it is pasted by hand.
        sys.stdout.write(json.dumps(settings, indent=None if args.json else 2) + "\n")
        return 0
    path = Path(args.write)
    merge_by_hand = "fix or move the file, or print the settings without --write and merge them by hand"
    # Read bounded, and only a regular file: /dev/zero or a FIFO named here would never end.
    existing = bounded.read_text(path, SETTINGS_BYTES, hint=merge_by_hand)
    try:
        current = json.loads(existing) if existing is not None else {}
    except (ValueError, RecursionError) as e:
        raise InvalidInput(f"cannot read {path} as JSON: {shortened(str(e), 120)}", hint=merge_by_hand) from None
    if not isinstance(current, dict) or not isinstance(current.get("hooks", {}), dict):
        raise InvalidInput(f"{path} is not a settings object with a `hooks` object", hint="merge them by hand")
    hooks = current.setdefault("hooks", {})
    for event, entries in settings["hooks"].items():
        kept = [e for e in hooks.get(event, []) if not _ours(e)] if isinstance(hooks.get(event), list) else []
        hooks[event] = kept + entries
    made = not path.parent.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    if made:  # a mistyped path shows here (a project's first .claude/ is made the same way)
        note(f"strata: made the folder {path.parent}")
    tmp = path.with_name(f".{path.name}.strata.tmp")
    tmp.write_text(json.dumps(current, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
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
                                     "never fails because its memory did. docs/guide.md#context-for-every-turn shows "
                                     "the wiring.")
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
