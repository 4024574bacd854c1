"""Credentials said in words, not set by a program: `the passphrase for the backup disk is
...`, `creds are admin / ...`, `The API key is ...`. The patterns credentials.py's Redactor runs
where their words are."""

from __future__ import annotations

import re

# A password said in words: `the passphrase for the backup key is orbit-tulip-quartz-ladder`,
# `the new pw for the router: ...`, `wifi key is ...`, `creds are admin / ...`.
# A short name (pass, pin, pw) only right before its verb or colon, or `for the THING`: `pass rate:
# 95%` and `pin count: 40` say no password.
SAID_PASSWORD = re.compile(r"(?i)(?:\b(?:password|passwort|passphrase|passcode|wi-?fi\s+key|wlan\s+key|mot\s+de\s+passe|"
                           r"contrase[ñn]a|senha|wachtwoord)\b(?:[^.\n]|\.(?=\S)){0,40}?"
                           r"|\b(?:pass|pin|pw)(?:\s+for\s+(?:the\s+|my\s+|our\s+)?[\w.@-]+)?\s*)"
                           r"(?:\b(?:is|est|es|ist|would\s+be|will\s+be|lautet)\s+(?:now\s+|still\s+|currently\s+)?|:\s+|"
                           r"\s+(?=`))(?:[\"`]([^\"`\n]{4,200})[\"`]|«\s*([^»\n]{4,200}?)\s*»|'?([^\s\"',;]{4,}))")
# A passphrase of plain words, unquoted, ending its sentence: `the passphrase for the backup disk
# is purple monkey dishwasher`; not where it is kept or what it is (`is stored in the vault`).
SAID_PHRASE = re.compile(r"(?i)\bpass\s?phrase\b[^.\n]{0,40}?\s(?:is|was)\s+(?:now\s+)?((?:[a-z]+[ -]){2,7}[a-z]+)"
                         r"(?=\s*(?:[.!;,]|$))")
NOT_A_PHRASE = frozenset("""stored kept saved written printed taped in on at under inside the a an my our your his her
their its same different not too very set changed required expired wrong correct incorrect known shared long short
case missing empty blank unknown only also still now being been""".split())
CREDS = re.compile(r"(?i)(?:\b(?:creds?|credentials)\b[^.\n]{0,20}?\s|\blogin(?::|\s+is)\s*)[\w.@-]+\s*/\s*([^\s,;]{4,})")
USE_AS = re.compile(r"(?i)\buse\s+(\S{6,200})\s+(?:as\s+(?:the\s+|your\s+)?password|to\s+(?:sign|log)\s*in)")
# A key or token said in words: `The API key is Zk93...`, `the deploy token for ci: 8f3a...`; only
# a value that looks generated (`the key is under the mat` says none).
SAID_KEY = re.compile(r"(?i)\b(?:key|token|secret)s?\b(?:\s+(?:for|of|to)\s+(?:the\s+|our\s+|my\s+)?[\w.@-]+)?"
                      r"\s*(?:\s(?:is|are|was)\s+(?:now\s+|still\s+)?|:\s+)[\"'`]?([A-Za-z0-9_\-./+=]{16,4000})")
