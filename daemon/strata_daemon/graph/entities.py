"""Rule-based entity extraction, pure (no I/O, no model): what a memory mentions.

Types and rules:
- `email`: name@domain.tld, lower-cased;
- `handle`: @name not part of an email address;
- `url`: http(s)://..., without trailing punctuation;
- `host`: a dotted name ending in letters (db1.prod.example.com, not a file name such as
  notes.txt or a version such as 1.2.3), or a name with a hyphen and digits (gw-02, node-1);
- `path`: /var/log/syslog, ~/notes/a.md, ./run.sh (two segments or more);
- `person`: the memory's source when it is a name (`Caroline`), and a capitalised name right
  after a word that introduces a person ("paged Ines", "with Marta Lopez", "cc Bob");
- `source`: a source that is no name (`shell`, `cron`, `agent:hook`): where it came from.
Fact keys a memory set become `fact:` nodes through capture, not here.
"""

from __future__ import annotations

import re

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b")
_HANDLE = re.compile(r"(?<![\w@.])@([A-Za-z0-9_][A-Za-z0-9_.-]{0,38}[A-Za-z0-9_])")
_URL = re.compile(r"\bhttps?://[^\s<>\"'`]+", re.IGNORECASE)
_FQDN = re.compile(r"(?<![\w./@-])((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24})(?![\w/@-])")
_SHORT_HOST = re.compile(r"(?<![\w./@-])([a-z][a-z0-9]*(?:-[a-z0-9]+)*-\d+[a-z0-9]*)(?![\w/@.-])")
_PATH = re.compile(r"(?<![\w/:.~])((?:~|\.{1,2})?/[\w.@+-]+(?:/[\w.@+-]+)+/?)")
_INTRO = re.compile(r"\b(?:paged|pinged|asked|told|called|emailed|messaged|met|with|from|by|cc|to|for|and|thanked)"
                    r"\s+((?:[A-Z][a-z]+)(?:\s+[A-Z][a-z]+)?)\b")
# File extensions that make a dotted word a file, not a host.
_FILE_ENDINGS = {"txt", "md", "log", "json", "jsonl", "yaml", "yml", "toml", "py", "sh", "js", "ts", "csv", "conf",
                 "cfg", "ini", "db", "sql", "html", "css", "xml", "pdf", "png", "jpg", "gz", "zip", "tar", "service",
                 "timer", "lock", "pid", "sock", "rs", "go", "c", "h", "cpp", "java", "rb", "php", "env", "bak"}
# Capitalised words that follow an introducing word without being a name.
_NOT_NAMES = {"The", "A", "An", "This", "That", "These", "Those", "It", "We", "I", "You", "He", "She", "They",
              "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "January", "February",
              "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
              "Today", "Tomorrow", "Yesterday", "All", "Everyone", "Some", "Any", "No", "Yes", "My", "Our", "Your",
              "His", "Her", "Their", "Its", "Me", "Us", "Him", "Them"}
MAX_VALUE_CHARS = 200
TYPES = ("person", "handle", "email", "url", "host", "path")  # what extract() finds


def _clean_url(url: str) -> str:
    return url.rstrip(".,;:!?)]}")


def extract(text: str, source: str | None = None) -> list[tuple[str, str]]:
    """(type, value) pairs a memory mentions, each once, in a stable order."""
    found: dict[tuple[str, str], None] = {}

    def add(kind: str, value: str) -> None:
        value = value.strip()
        if value and len(value) <= MAX_VALUE_CHARS:
            found[(kind, value)] = None

    if source and source.strip():
        said_by = " ".join(source.split())
        add("person" if said_by[0].isupper() else "source", said_by)  # `Caroline` is someone; `shell` is not
    # Each pattern needs a character most memories lack; checking for it first skips most scans.
    at, dot = "@" in text, "." in text
    emails = [m.group(0) for m in _EMAIL.finditer(text)] if at and dot else []
    for e in emails:
        add("email", e.lower())
    urls = [_clean_url(m.group(0)) for m in _URL.finditer(text)] if "://" in text else []
    for u in urls:
        add("url", u)
    covered = " ".join(emails + urls)  # hosts and paths inside these are not mentioned on their own
    for m in _HANDLE.finditer(text) if at else ():
        add("handle", "@" + m.group(1).lower())
    for m in _FQDN.finditer(text) if dot else ():
        host = m.group(1).lower()
        if host.rsplit(".", 1)[1] not in _FILE_ENDINGS and host not in covered:
            add("host", host)
    for m in _SHORT_HOST.finditer(text) if "-" in text else ():
        add("host", m.group(1))
    for m in _PATH.finditer(text) if "/" in text else ():
        if m.group(1) not in covered:
            add("path", m.group(1))
    for m in _INTRO.finditer(text):
        words = m.group(1).split()
        while words and words[-1] in _NOT_NAMES:
            words.pop()
        if words and words[0] not in _NOT_NAMES:
            add("person", " ".join(words))
    return list(found)
