"""Commands that bring memories into a namespace or take them out: observe (one), import (many,
from JSON Lines), export (all, as JSON Lines)."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import tempfile

from strata_daemon.base import bounded, timeutil
from strata_daemon.base.wording import counted
from strata_daemon.config.settings import KINDS
from strata_daemon.errors import EmbeddingUnavailable, InvalidInput, StorageError
from strata_daemon.faces.cli.memory_cmds import opened
from strata_daemon.faces.cli.output import Progress, emit, note
from strata_daemon.faces.cli.parsers import adder, number

COMMANDS = ("observe", "import", "export")


async def cmd_observe(args) -> int:
    from strata_daemon.app.public import parse_context_pairs

    piped = args.text is None or args.text == "-"
    if piped and (sys.stdin is None or sys.stdin.isatty()):
        raise InvalidInput("no text given", hint="strata observe TEXT, or pipe the text on stdin")
    async with opened(args) as mem:
        text: str | bytes = args.text
        if piped:
            text = bounded.read_stream(sys.stdin.buffer, mem.limits.max_content_bytes, what="the text on stdin",
                                       hint="split it, or raise store.max_content_bytes in strata.toml")
        result = await mem.observe(text, kind=args.kind, importance=args.importance,
                                   context=parse_context_pairs(args.context), at=args.at, source=args.source,
                                   session=args.session, factual=args.factual, redact=not args.no_redact)
    if args.json:
        emit(result, True)
    else:
        print(result["id"])
        if result["status"] != "created":
            note(f"strata: same as memory {result['id']} ({result['status']}, {result['occurrences']} occurrences)")
        for line in _fact_notes(result.get("facts", ())):
            note(line)
        for warning in result.get("warnings", ()):
            note(f"strata: warning: {warning}")
    return 0


def _fact_notes(facts) -> list[str]:
    """What the memory did to the facts, a line each: a person sees a value taken, changed or
    ended as it happens, not only later in `fact list` (stdout keeps the id alone, for scripts)."""
    out = []
    for f in facts:
        if f.get("status") not in ("created", "changed", "recorded", "retracted") or not f.get("key"):
            continue
        if f.get("value") is None:
            out.append(f"strata: fact {f['key']} ended by this memory (`strata fact conflicts` to review it)")
        else:
            said = "now" if f["status"] != "recorded" else "in its history"
            was = f", was {f['previous']}" if f["status"] == "changed" and f.get("previous") is not None else ""
            out.append(f"strata: fact {f['key']} = {f['value']} ({said}{was})")
    return out


class _Tee:
    """A pipe's lines as they are read, copied to `spool` for the second reading."""

    def __init__(self, stream, spool):
        self.stream, self.spool = stream, spool

    def readline(self, size: int = -1) -> bytes:
        line = self.stream.readline(size)
        self.spool.write(line)
        return line

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self.spool.write(data)
        return data


def _unsealer(stream, home, key_file: str | None):
    """How the file's bytes become its lines: as they are, or through the key of a sealed export."""
    from strata_daemon.app import sealing
    from strata_daemon.base.sealed_export import MAGIC, SealedReader, is_sealed_export

    try:
        head = stream.peek(len(MAGIC))[:len(MAGIC)] if hasattr(stream, "peek") else b""
    except OSError:  # a file the kernel will not read: the reading below says so, as for any file
        head = b""
    if not is_sealed_export(head):
        return lambda raw: raw
    key = sealing.import_key(home, key_file)
    first: list[SealedReader] = []

    def unsealed(raw):
        first.append(first[0].again(raw) if first else SealedReader(raw, key.secret))
        return first[-1]
    return unsealed


@contextlib.contextmanager
def _unreadable(path: str):
    from strata_daemon.base.sealed_export import SealedExportError

    try:
        yield
    except SealedExportError as e:
        raise InvalidInput(f"{path}: {e}; nothing was imported",
                           hint="a sealed export opens with the key of the home that wrote it (--key-file PATH)") from None


async def cmd_import(args) -> int:
    from strata_daemon.app.public import parse_jsonl, stored_rows

    path = args.file
    try:
        stream = sys.stdin.buffer if path == "-" else open(path, "rb")
        size = 0 if path == "-" else os.fstat(stream.fileno()).st_size
    except OSError as e:
        raise InvalidInput(f"cannot read {path}: {e.strerror}") from None
    async with opened(args, actor="import") as mem:
        now, keep = timeutil.now(), int(mem.config.tuning.store.import_buffer_mb) * 2**20
        # A pipe is read once: a copy (private, unnamed, gone on exit) serves the second reading.
        spool = tempfile.TemporaryFile(dir=mem.home.state_dir) if not stream.seekable() else None
        with stream, spool or contextlib.nullcontext(), _unreadable(path):
            lines_of = _unsealer(stream, mem.home, args.key_file)
            bar = Progress(size, "checking", unit="bytes")
            parsed = parse_jsonl(lines_of(stream if spool is None else _Tee(stream, spool)), mem.limits,
                                 agent=mem.agent, now=now, progress=bar.advance, keep_bytes=keep)
            bar.close()
            if parsed.bad and not args.skip_bad:
                shown = "\n".join(f"  line {n}: {msg}" for n, msg in parsed.bad[:10])
                more = f"\n  ... and {len(parsed.bad) - 10} more" if len(parsed.bad) > 10 else ""
                raise InvalidInput(f"{path}: {counted(len(parsed.bad), 'bad line')}, nothing imported\n{shown}{more}",
                                   hint="fix them, or pass --skip-bad to import the good lines")
            rows = parsed.rows
            if rows is None:
                (spool or stream).seek(0)
                rows = stored_rows(lines_of(spool or stream), mem.limits, agent=mem.agent, now=now,
                                   skip={n for n, _ in parsed.bad})
            bar = Progress(parsed.good, "importing", unit="observations")
            totals = await mem.observe_many(rows, validated=True, progress=bar.advance,
                                             input_sha256=parsed.sha256, skip_purged=True)
            bar.close()
        embedded = 0
        if not args.no_embed:
            # The memories are stored either way; without a model they wait in the backlog.
            try:
                bar = Progress(await mem.embedding_backlog(every_namespace=True), "embedding", unit="memories")
                embedded = (await mem.embed_pending(progress=bar.advance))["embedded"]
                bar.close()
            except EmbeddingUnavailable as e:
                note(f"strata: imported, but not embedded: {e.message}")
        backlog = await mem.embedding_backlog()
    report = {"created": totals["created"], "repeat": totals["repeat"], "duplicate": totals["duplicate"],
              "skipped_purged": totals["purged"], "skipped_bad": len(parsed.bad),
              "bad_lines": [n for n, _ in parsed.bad], "embedded": embedded, "embedding_backlog": backlog}
    emit(report, args.json, lambda r: (f"imported {r['created']} new, {counted(r['repeat'], 'repeat')} folded in, "
                                       f"{r['duplicate']} already present, {counted(r['skipped_bad'], 'bad line')} skipped; "
                                       f"embedded {r['embedded']} (all that were waiting), {r['embedding_backlog']} waiting"))
    if report["skipped_purged"] and not args.json:
        note(f"strata: {report['skipped_purged']} left out: they hold the words of memories purged from this home "
             "(`strata observe` stores such words anew, if that is what you mean)")
    return 0


def export_target(output: str, home) -> tuple[str, bool]:
    """Where an export writes, and whether through a temporary file renamed over it (a regular
    file, or none yet) or straight into it (a pipe, a device such as /dev/stdout). A symlink is
    written through. The home's own files are refused: a rename over the database loses it."""
    target = os.path.realpath(output)
    folder = os.path.dirname(target)
    if os.path.isdir(target):
        raise InvalidInput(f"{output} is a folder", hint="name a file to export to, e.g. memories.jsonl")
    if not os.path.isdir(folder):
        raise InvalidInput(f"cannot export to {output}: the folder {folder} does not exist",
                           hint="create it first, or name a file in an existing folder")
    protected = [os.path.realpath(d) for d in (home.state_dir, home.capsule_dir, home.templates_dir)]
    if any(os.path.commonpath([target, d]) == d for d in protected) or target == os.path.realpath(home.config_path):
        raise InvalidInput(f"{output} is inside the home's own files ({home.root}); an export there would "
                           "replace them", hint="export to a file outside the home, e.g. ~/strata-export.jsonl")
    exists = os.path.exists(target)
    return target, not exists or os.path.isfile(target)


async def _write_export(mem, out, key) -> int:
    from strata_daemon.app.public import export_line
    from strata_daemon.base.sealed_export import SealedWriter

    sealed = SealedWriter(out, key.secret) if key is not None else None
    write = sealed.write if sealed else (lambda line: out.write(line.encode("utf-8")))
    count = 0
    async for ep in mem.export():
        write(export_line(ep))
        count += 1
    if sealed:
        sealed.close()
    return count


async def cmd_export(args) -> int:
    from strata_daemon.app import sealing

    to_file = args.output not in (None, "-")
    async with opened(args) as mem:
        key = None if args.plain else sealing.export_key(mem.home)
        if not to_file:
            if key is not None and sys.stdout.isatty():
                raise InvalidInput("the home is sealed, so its export is too: not for a terminal",
                                   hint="write it to a file with -o FILE, or ask for --plain")
            sys.stdout.flush()
            await _write_export(mem, sys.stdout.buffer, key)
            sys.stdout.buffer.flush()
            return 0
        target, renamed = export_target(args.output, mem.home)
        try:
            count = await _export_to(mem, target, renamed, key)
        except OSError as e:
            # A full disk is the store's kind of problem; a folder that takes no file is the path's.
            kind, fix = (StorageError, "free some space or choose another file") if e.errno in (
                errno.ENOSPC, errno.EDQUOT) else (InvalidInput, "choose a file in a folder you can write to")
            raise kind(f"cannot write the export to {args.output}: {e.strerror or e}",
                       hint=f"{fix}; the memories are unchanged, and an older export there is kept") from None
    note(f"strata: exported {counted(count, 'memory')} to {args.output}" + (" (sealed)" if key else ""))
    return 0


async def _export_to(mem, target: str, renamed: bool, key) -> int:
    if not renamed:
        with open(target, "wb") as out:
            return await _write_export(mem, out, key)
    # Written beside the target and renamed at the end: a failed export never clobbers an older one.
    fd, tmp = tempfile.mkstemp(prefix=".strata-export-", dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "wb") as out:
            count = await _write_export(mem, out, key)
        os.replace(tmp, target)
        return count
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def register(sub, common) -> None:
    add = adder(sub, common)

    p = add("observe", cmd_observe, "Store an observation; prints its id.")
    p.add_argument("text", nargs="?", help="the text (omit or '-' to read stdin)")
    p.add_argument("--kind", help=f"kind of episode (default observation; {', '.join(KINDS)})")
    p.add_argument("--importance", type=number, help="0-1 (default 0.5)")
    p.add_argument("--context", action="append", metavar="KEY=VALUE",
                   help="context feature, repeatable (environment, task_type, goal, or your own)")
    p.add_argument("--at", help="when it happened (ISO 8601, unix seconds, '3h ago'; default now)")
    p.add_argument("--source", help="where it came from (loop, email, person, ...)")
    p.add_argument("--session", help="session or context id")
    p.add_argument("--factual", action="store_true", help="always eligible for recall, never decays")
    p.add_argument("--no-redact", action="store_true",
                   help="keep credentials in this text as given (privacy.redact replaces them); the memory's "
                        "history records that it kept some, and of which kinds")

    p = add("import", cmd_import, "Import observations from JSON Lines, one object per line: "
            '{"content": TEXT} and, optionally, "kind", "importance", "event_at", "source", "session", "context" '
            "(docs/guide.md), or the lines `strata export` writes.")
    p.add_argument("file", help="path, or '-' for stdin")
    p.add_argument("--skip-bad", action="store_true", help="import the good lines, report the bad ones")
    p.add_argument("--no-embed", action="store_true",
                   help="store only; the daemon's embed pass (or `strata embed`) embeds them later")
    p.add_argument("--key-file", help="a sealed export's key, when another home wrote it (default: this home's)")

    p = add("export", cmd_export, "Export the namespace as JSON Lines (re-importable).")
    p.add_argument("-o", "--output", help="file to write (0600); default stdout")
    p.add_argument("--plain", action="store_true",
                   help="a sealed home's export in the clear (by default it is sealed with the home's key)")
