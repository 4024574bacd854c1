"""How the CLI shows things: JSON for agents, short text for people, errors on stderr."""

from __future__ import annotations

import errno
import json
import shutil
import sys
import textwrap
import time
from typing import Any, Callable

from strata_daemon.base.timeutil import duration, iso
from strata_daemon.base.wording import field, plain, printable
from strata_daemon.errors import StrataError

# JSON escapes the C0 controls itself; DEL and the C1 ones it leaves, and can only hold them
# inside strings, where \u00NN says the same.
_JSON_VISIBLE = {c: f"\\u{c:04x}" for c in (0x7f, *range(0x80, 0xa0))}


class OutputLost(Exception):
    """Standard output took no more (a full disk, a closed terminal): the answer is lost, and
    what the command did is not."""

    def __init__(self, cause: OSError):
        super().__init__(cause.strerror or str(cause))
        self.message = f"its output could not be printed ({self})"


class Guarded:
    """Standard output whose write failures are `OutputLost`, told apart from any other OSError.
    A closed pipe stays a BrokenPipeError (`strata export | head` is no failure)."""

    def __init__(self, stream):
        self._stream = stream  # None when the caller closed it (`>&-`): every write is lost

    def write(self, text: str) -> int:
        if self._stream is None:
            raise OutputLost(OSError(errno.EBADF, "standard output is closed"))
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise OutputLost(e) from None

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise OutputLost(e) from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _json(value: Any, indent: int | None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent, default=str).translate(_JSON_VISIBLE)


def emit(value: Any, as_json: bool, human: Callable[[Any], str] | None = None, *, wrap: bool = True) -> None:
    """VALUE as JSON, or as HUMAN words it; a document (a capsule, a block, a diff) is printed as
    it is, not WRAPped to the terminal."""
    if as_json or human is None:
        sys.stdout.write(_json(value, None if as_json else 2) + "\n")
    else:
        text = human(value)
        if text:
            sys.stdout.write(_fitted(printable(text.rstrip("\n")), sys.stdout, wrap) + "\n")


def error(exc: StrataError, as_json: bool) -> int:
    if as_json:
        try:
            sys.stdout.write(_json(exc.as_dict(), None) + "\n")
        except OutputLost:  # stdout is closed or full: stderr and the exit code still say it
            pass
    said = f"strata: {printable(exc.message)}" + (f"\n  hint: {printable(exc.hint)}" if exc.hint else "")
    sys.stderr.write(_fitted(said, sys.stderr) + "\n")
    return exc.exit_code


def note(text: str) -> None:
    sys.stderr.write(_fitted(printable(text), sys.stderr) + "\n")


def fit(text: str, width: int) -> str:
    """TEXT with each line longer than WIDTH wrapped between words, its further lines indented
    two more than its first: a terminal would break it mid-word. Lines that fit are untouched."""
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        lead = " " * (len(line) - len(line.lstrip(" ")) + 2)
        out += textwrap.wrap(line, width, subsequent_indent=lead, break_long_words=False,
                             break_on_hyphens=False) or [line]
    return "\n".join(out)


def _fitted(text: str, stream, wrap: bool = True) -> str:
    # Only for a person's terminal: into a pipe or a file a line stays whole, for grep and logs.
    try:
        tty = wrap and stream.isatty()
    except (AttributeError, ValueError, OSError):
        tty = False
    return fit(text, columns()) if tty else text


def outline(value: Any, depth: int = 1) -> str:
    """A result as a person reads it: a line per field (`kept: 1`), a nested table indented below
    its name, yes and no for booleans; never a Python repr."""
    if not isinstance(value, dict):
        return "  " * depth + plain(value)
    lines = []
    for key, v in value.items():
        if isinstance(v, dict) and v:
            lines += ["  " * depth + f"{str(key).replace('_', ' ')}:", outline(v, depth + 1)]
        else:
            lines.append("  " * depth + f"{str(key).replace('_', ' ')}: {field(key, v)}")
    return "\n".join(lines)


# Nothing reads "—" in every text form, as `plain` says it; a "-" beside it read as a different thing.
def short_time(ts: float | None) -> str:
    return (iso(ts) or "—").replace("T", " ").replace("Z", "")[:16]


def columns() -> int:
    """The terminal's width; 80 into a pipe or a file, so a listing reads the same in a log."""
    return max(60, shutil.get_terminal_size((80, 24)).columns)


def one_line(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def age(seconds: float | None) -> str:
    return "—" if seconds is None else duration(seconds)


def ago(seconds: float | None) -> str:
    """How long ago, or how far ahead: a fact may be set to become true later."""
    if seconds is None:
        return "—"
    return f"in {duration(-seconds)}" if seconds < 0 else f"{duration(seconds)} ago"


def inline(value: str | None) -> str:
    return "(none)" if value is None else value.replace("\n", "\\n")


def show_fact(f: dict) -> str:
    stale = "  STALE" if f.get("stale") else ""
    if f.get("superseded_by"):
        stale = f"  STALE: {f['superseded_by'].replace('episode:', 'memory #')} says it changed {ago(time.time() - f['superseded_at'])}"
    return (f"{f['key']} = {inline(f['value'])}   (since {short_time(f.get('valid_from'))}, "
            f"{ago(f.get('age_seconds'))}, {f.get('source')}{stale})")


class Progress:
    """A progress bar on stderr when it is a terminal; silent otherwise (journald, pipes, CI)."""

    def __init__(self, total: int, label: str, *, enabled: bool | None = None, unit: str = "items"):
        self.total, self.label, self.unit = max(total, 0), label, unit
        self.done = 0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._start = time.perf_counter()
        self._last = 0.0

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.perf_counter()
        if self.enabled and (now - self._last > 0.1 or self.done >= self.total):
            self._last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        if self.total < self.done:  # the total was unknown or grew: show a count without a bar
            self.total = self.done
        frac = min(1.0, self.done / self.total) if self.total else 1.0
        bar = "#" * int(frac * 30)
        rate = self.done / max(now - self._start, 1e-9)
        sys.stderr.write(f"\r{self.label} [{bar:<30}] {self.done}/{self.total} {self.unit} ({rate:,.0f}/s)")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw(time.perf_counter())
            sys.stderr.write("\n")


def count(text: str) -> int:
    """An argparse type for --limit and the like: a whole number of 1 or more (-1 is not "all")."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not 1 or more")
    return value
