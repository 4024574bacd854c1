"""Credentials in text, found and replaced before anything is stored. Pure: no I/O.

An agent stores what it reads (tool output, shell sessions, transcripts), and these hold keys
and passwords. Each one found becomes a typed placeholder, `[redacted:github-token:4f0c2a]`,
whose last part is a keyed hash of the secret: two mentions of one secret stay linkable, and
the secret cannot be read back from it. `<private>...</private>` spans go whole (`[private]`).

What is found:
- the vendor formats of detect-secrets (a maintained detector library, Yelp's): AWS access
  keys, Azure storage keys, passwords in URLs, Discord, GitHub, GitLab, Mailchimp, npm,
  OpenAI, PyPI, SendGrid, Slack (tokens and webhooks), Square, Stripe, Telegram, Twilio,
  Artifactory, IBM and SoftLayer credentials; its patterns are used as it ships them;
- ours, for what it does not cover or covers in part (docs/forgetting.md#secrets lists them):
  private key blocks whole, JSON web tokens with their signature, other vendors' keys, a
  password where people, tools and files put one (assigned, given as a tool's argument, set in
  a server's file, said in words) unless it is a placeholder, and a random-looking value
  assigned to a name that ends in key, token, secret or salt;
- patterns a person adds (privacy.patterns), under their own names.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterable, Mapping

from strata_daemon.base.said_secrets import CREDS, NOT_A_PHRASE, SAID_KEY, SAID_PASSWORD, SAID_PHRASE, USE_AS

PRIVATE = re.compile(r"(?is)<private>.*?(?:</private>|\Z)")
# A run long enough to be a key: every vendor format the library knows holds one, and a text
# without one (most prose) never loads it (0.2 s to import).
_LONG_RUN = re.compile(r"[A-Za-z0-9_\-./+=]{20,}|-----BEGIN|://[^\s/@]*:[^\s/@]+@|_authToken")

_BLOCK = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END \1-----|\Z)", re.S)
_OURS: tuple[tuple[str, re.Pattern], ...] = (
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")),
    ("github-token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{50,}")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}")),
    ("pypi-token", re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{50,}")),
    ("mailgun-key", re.compile(r"\bkey-[0-9a-f]{32}\b")),
    ("vault-token", re.compile(r"\bhv[sb]\.[A-Za-z0-9_-]{24,}")),
    ("sonar-token", re.compile(r"\bsq[pau]_[0-9a-f]{40}\b")),
    # The library knows live keys only; a test key opens a real account's test mode.
    ("stripe-key", re.compile(r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}")),
    # An AWS secret said in words, unquoted: `New secret access key is a4Cg...`.
    ("aws-secret", re.compile(r"(?i)(?:secret[_\s-]?access[_\s-]?key|aws[_\s-]?secret)[^\n]{0,30}?"
                              r"(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")),
    # A URL's password with no user (`redis://:pw@host`) or with characters the library's pattern
    # leaves out (`!`).
    ("url-password", re.compile(r"://[^\s/@:]*:([^\s/@]{2,200})@")),
)
# `password = "..."`, `DB_PASSWORD: ...`, `--password ...`, `"passwd": "..."`.
# The value is on the name's own line (`Enter password:` then a new line holds none), three
# characters or more unquoted (`admin-password:  12 bytes` is a size); a name in camel case
# counts (`rootPassword=`), and WPA's `psk=`.
# A name ending in password counts whatever comes before it (`rpcpassword`, `keystorePassword`);
# a short one (`pass`, `pw`) where a word or `_` ends before it (`smtp_pass`, `ROOT_PW`). A type
# annotation may come between (`DB_PASS: &str = "..."`), and a call takes one (`.password("...")`).
_NAME_TYPE = r"""(?:[ \t]*:[ \t]*&?['\w\[\]<>]+(?=[ \t]*=))?"""
_PASSWORD = re.compile(
    r"""(?ix)(?:\b\w{0,40}?(?:password|passwd|passphrase|authtok)|(?<![:/])(?:\b|_|(?<=PG)|(?<=[a-z])(?=(?-i:P)))(?:pass|pwd|pw|secret|psk))s?"""
    + _NAME_TYPE + r"""
    (?:["']?[ \t]*(?:[:=]|:=|=>)|[ \t](?=["'])|\((?=["']))[ \t]*
    (?:"([^"\n]{1,200})"|'([^'\n]{1,200})'|([^\s"',;)}\]]{3,200}))""")
# Not `-p`: it is a port, a path or a parent folder as often (`ssh -p 2222`, `mkdir -p /var/lib`).
# keytool's and jarsigner's `-storepass` and `-keypass` are passwords whatever follows them.
_CLI_PASSWORD = re.compile(r"(?i)(?:^|\s)(?:--[\w-]{0,40}?pass(?:word|wd|phrase)?|-(?:src|dest)?(?:store|key)pass)[= ](?!-)"
                           r"['\"]?([^\s\"']{4,200})")
# A config file's line that is a password name and its value alone (msmtp's `password PW`,
# mosquitto's `remote_password PW`, nslcd's `bindpw PW`, an FTP session's `PASS PW`).
_PASSWORD_LINE = re.compile(r"(?im)^[ \t]*(?:\w{0,40}(?:password|passwd|passphrase)|(?:\w+_)?(?:pass|pw)|bindpw)[ \t]+(?!=|\S*://)"
                            r"(\S{3,200})[ \t]*$")
# A server's own password directives (redis.conf's `requirepass`, `masterauth`), and PHP's
# `define('DB_PASSWORD', '...')` and WordPress's keys and salts.
_DIRECTIVE = re.compile(r"(?im)^\s*(?:requirepass|masterauth|auth_pass)\s+[\"']?([^\s\"']{4,200})")
# A password where a tool or a file's layout puts it: `sshpass -p PW`, `mysql -pPW`, .netrc's
# `machine H login U password PW`, .pgpass's `host:port:db:user:PW`.
_ARG = r"""\s*(?:'([^'\n]{3,200})'|"([^"\n]{3,200})"|([^\s'"]{3,200}))"""
_PLACED = (
    (re.compile(r"\bsshpass\s+-p" + _ARG), ("sshpass",)),
    (re.compile(r"\b(?i:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;]*?\s-p(?=\S)" + _ARG), ("mysql", "mariadb")),
    (re.compile(r"\bdocker\s+login\b[^\n]*?\s(?:-p|--password)[ =]" + _ARG), ("docker",)),
    (re.compile(r"\bredis-cli\b[^\n]*?\s-a" + _ARG), ("redis-cli",)),
    (re.compile(r"\b(?:ipmitool|sqlcmd|bcp|osql|zip)\b[^\n]*?\s-P" + _ARG), ("ipmitool", "sqlcmd", "bcp", "osql", "zip")),
    (re.compile(r"\b7z[ar]?\b[^\n]*?\s-p(?=\S)" + _ARG), ("7z",)),
    (re.compile(r"\bx11vnc\b[^\n]*?\s-passwd" + _ARG), ("x11vnc",)),
    (re.compile(r"\bhtpasswd\s+(?=(?:[^\n]*\s)?-\w*b)(?:-\w+\s+)*\S+\s+\S+\s+" + _ARG), ("htpasswd",)),
    (re.compile(r"(?i)\bnet\s+user\s+\S+\s+(?!/)" + _ARG), ("net user",)),
    (re.compile(r"\bnmcli\b[^\n]*?\spassword\s" + _ARG), ("nmcli",)),
    (re.compile(r"""\becho\s+['"][\w.-]+:([^'"\s]{3,200})['"]\s*\|\s*(?:sudo\s+)?chpasswd"""), ("chpasswd",)),
    (re.compile(r"(?m)^\s*rootpw\s+(?:--\w+\s+)*" + _ARG), ("rootpw",)),
    (re.compile(r"(?i)ConvertTo-SecureString\s+(?:-String\s+)?" + _ARG), ("securestring",)),
    (re.compile(r"(?i)<\w{0,40}pass(?:word|wd)?>([^<\n]{1,200})</"), ("pass",)),
    (CREDS, ("cred", "login")),
    (USE_AS, ("as the password", "as password", "as your password", "to sign", "to log")),
    (re.compile(r"(?i)\b(?:pwd|password)\s*=\s*\{([^}\n]{1,200})\}"), ("pw",)),  # ODBC's `Pwd={...}`
    (re.compile(r"\b(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport)\b[^\n|;]*?\s-p" + _ARG), ("mongo",)),
    (re.compile(r"""\b(?:smbclient|rpcclient)\b[^\n]*?\s-U\s*['"]?[^%\s'"]+%([^\s'"]{3,200})"""), ("smbclient", "rpcclient")),
    (re.compile(r"(?i)\bnet\s+use\s+(?:\S+:\s+)?\\\\\S+\s+(?!/)" + _ARG), ("net use",)),
    (re.compile(r"""\becho\s+['"]?([^'"\s|]{3,200})['"]?\s*\|\s*sudo\s+(?:-\w+\s+)*?-S"""), ("sudo",)),
    (re.compile(r'(?i)\bexpect\s+"[^"\n]*pass[^"\n]*"\s*\n\s*send\s+(?:--\s+)?"([^"\n]+?)(?:\\r|\\n)?"'), ('send "', "send -- ")),
    (re.compile(r"""ENV\.fetch\(\s*["']\w{0,40}(?:PASSWORD|PASS|SECRET|TOKEN|KEY)["']\s*\)\s*\{\s*["']([^"'\n]{3,200})["']"""),
     ("env.fetch",)),
    (re.compile(r"""(?i)\bconn(?:ect)?\s+[\w$]+/(?:"([^"\n]{3,200})"|([^\s@"/]{3,200}))@"""), ("connect ", "conn ")),
    (re.compile(r"\bsqlplus\s+[\w$]+/([^@\s]{3,200})@"), ("sqlplus",)),
    (re.compile(r"\bpsexec\b[^\n]*?\s-p" + _ARG), ("psexec",)),
    (re.compile(r"\b(?:ldapsearch|ldapmodify|ldapadd|ldapdelete|ldapwhoami|ldappasswd)\b[^\n]*?\s-w" + _ARG), ("ldap",)),
    (re.compile(r"\bsnmp\w+\b[^\n]*?\s-[AX]" + _ARG), ("snmp",)),
    (re.compile(r"\bmosquitto_(?:pub|sub)\b[^\n]*?\s-P" + _ARG), ("mosquitto_",)),
    (re.compile(r"\bcurl\b[^\n]*?\s(?:-u|--user)\s+['\"]?[^:\s'\"]+:([^\s'\"]{3,200})"), ("curl",)),
    (re.compile(r"""\becho\s+['"]?([^'"\s|]{3,200})['"]?\s*\|\s*(?:sudo\s+)?docker\s+secret\s+create"""), ("docker secret",)),
    (re.compile(r"(?i)<\w{0,40}password>\s*<value>([^<\n]{1,200})</value>"), ("password>",)),
    (re.compile(r"""(?i)\bkey=["'][^"']*(?:password|passwd|secret|token|apikey|api_key)[^"']*["']\s+value=["']([^"']{3,200})["']"""),
     ("key=",)),
    (re.compile(r""":\s*(?:XAUTH|PSK|EAP)\s+"([^"\n]{3,200})\""""), ("xauth", "psk", "eap")),
    (re.compile(r"(?m)^\[?[\w.-]+\]?(?::\d+)?\s+[\w.@+-]+:(\S{3,200})$"), ("sasl_passwd",)),
    (_PASSWORD_LINE, ("pass", "pw")),
    (re.compile(r"(?im)nickserv\s+identify\s+(?:\S+\s+)?(\S{4,200})[ \t]*$"), ("nickserv",)),
    (re.compile(r"(?im)^\s*user\s+\S+\s+(\S{3,200})\s*$"), ("ftp",)),
    (re.compile(r"(?<=\s)-[AX]" + _ARG), ("snmp",)),
    (re.compile(r"(?i)\bIDENTIFIED\s+(?:WITH\s+\w+\s+)?BY\s+(?:PASSWORD\s+)?" + _ARG), ("identified",)),
    (re.compile(r"(?i)\bWITH\s+(?:ENCRYPTED\s+)?PASSWORD\s*(?:=\s*)?N?(?=['\"])" + _ARG), ("with password", "with encrypted")),
    (re.compile(r"(?i)/pass:(\S{3,200})"), ("/pass:",)),
    (re.compile(r"\bmachine\s+\S+(?:\s+(?:login|account)\s+\S+)+\s+password\s+(\S+)"), ("machine",)),
    (re.compile(r"(?m)^[\w.*-]+:(?:\d+|\*):[\w.*-]+:[\w.*@-]+:(\S+)$"), (":",)),
)
# An AWS secret key beside its access key id, however the two are laid out.
_AWS_ID = re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")
_FORTY = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_DEFINE = re.compile(r"""(?i)\b(?:define|setenv|putenv)\(\s*['"]\w{0,40}(?:PASSWORD|PASS|PWD|SECRET|KEY|SALT|TOKEN)['"]\s*,\s*"""
                     r"""['"]([^'"\n]{4,200})['"]""")
# `API_KEY=...`, `client_secret: ...`, `auth_token = "..."`: taken when the value looks random.
# Any name ending in key, token, secret, salt or bearer (`HMAC_KEY`, `signingKey`, `jwtSecret`,
# `Unseal Key 1`), not one that says public (`PublicKey`).
_KEYED = re.compile(
    r"""(?ix)(?<![:/])((?:\w{0,40}?(?:key|token|secret|salt|seed|bearer)|unseal[ ]key[ ]\d+|secret[_-]?key[_-]?base))"""
    + _NAME_TYPE + r"""
    ["']?\s*(?:[:=]|:=|=>)\s*(?:\[\]byte\(|process\.env\.\w+\s*\|\|\s*)?(?:"([^"\s]{16,4000})"|'([^'\s]{16,4000})'|([A-Za-z0-9_\-./+=:]{16,}))""")
# `--api-key VALUE`, `"--secret-key", "VALUE"`; a session cookie's value.
_FLAG_KEYED = re.compile(r"""--[\w-]{0,40}?(?:key|token|secret)["']?(?:=|\s+|,\s*)["']?([A-Za-z0-9_\-./+=]{16,4000})""")
_COOKIE = re.compile(r"(?i)\b(?:session|sess|sid|auth|token)[\w-]{0,40}=([A-Za-z0-9_\-.%]{16,4000})")
_HEADER = re.compile(r"""(?i)\bX-[\w-]{0,40}(?:key|token|secret|auth)["']?(?::|\s)\s*["']?([A-Za-z0-9_\-.]{16,})""")
_BEARER = re.compile(r"(?i)\bAuthorization[\"']?(?::|\s)\s*[\"']?(?:Bearer|Token|Basic)\s+([A-Za-z0-9_\-./+=]{16,})")
# Values that stand for a secret without being one.
_PLACEHOLDER = re.compile(r"""(?ix)^(?:\$\{?[\w.-]+\}?|\$[{(].*|%\w+%|.*\*{4,}.*|ENC\[.*|!\w+.*|\?.*|password|passwd|secret|
    (?:process\.env|os\.environ|os\.getenv|System\.getenv|ENV\[|env\(|getenv\(|ConvertTo-SecureString|Read-Host).*|(?-i:[A-Z]+(?:_[A-Z]+){2,})|[<(\[{].*|\{\{.*\}\}|%\(?[\w]*\)?s|\*+|x{3,}|\.{3,}|
    your[_-]?\w*|(?:my|the)(?:[_-]\w+)?|\w*[_-]here|null|none|nil|true|false|redacted|\[redacted.*|changeit_placeholder|
    required|optional|prompt|env|string|str|yes|no|\?+|-+|(?:var|local|module|data|each|self|random_\w+)\.[\w.\[\]-]+|
    (?:~|\.{1,2})?(?:/[\w.+-]+){2,}/?)$""")


# A password's searches, each with the words without which it cannot match; then the words
# of the searches in Redactor.find. One pass over a text finds which of them it holds.
_SAID = ((_PASSWORD, ("pass", "pw", "secret", "psk")), (_CLI_PASSWORD, ("--pass", "pass ")),
         (_DIRECTIVE, ("requirepass", "masterauth", "auth_pass")), (_DEFINE, ("define(", "setenv(", "putenv(")),
         *_PLACED)
_SAID_WORDS = ("pass", "pin", "pw", "key", "contrase", "senha", "wachtwoord")
_KEYED_WORDS = ("key", "token", "secret", "salt", "seed", "bearer")
_GATE_WORDS = frozenset({w for _, words in _SAID for w in words} | set(_SAID_WORDS) | set(_KEYED_WORDS)
                        | {"--", "cookie", "authorization", "x-"})
# Every word found where it starts (a look-ahead, so that overlapping ones all count); a longer
# word found implies the shorter ones inside it (`password` holds `pass`).
_GATE = re.compile("(?=(" + "|".join(re.escape(w) for w in sorted(_GATE_WORDS, key=len, reverse=True)) + "))")
_WITHIN = {w: frozenset(v for v in _GATE_WORDS if v in w) for w in _GATE_WORDS}
_SAID_BY_WORD = {w: tuple(i for i, (_, words) in enumerate(_SAID) if w in words) for w in _GATE_WORDS}


def _words_in(lower: str) -> frozenset[str]:
    return frozenset().union(*(_WITHIN[w] for w in _GATE.findall(lower)))


@dataclass(frozen=True)
class Found:
    kind: str
    start: int
    end: int


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _entropy(s: str) -> float:
    counts = Counter(s)
    return -sum(n / len(s) * math.log2(n / len(s)) for n in counts.values())


def _random(value: str) -> bool:
    """A value that looks generated, not a word, a path, a version or a plain hex checksum name."""
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"\d"))
    if re.fullmatch(r"[0-9A-Fa-f]{,31}", value):  # a key id or a short digest (`signingkey = 86E5C6AF...`)
        return False
    if ":" in value or _UUID.fullmatch(value) or value.startswith(("/", "./", "~/")):  # a compound id, a path
        return False
    if value.isalpha() and len(value) < 32:  # a word or a name in camel case (`ClearTextPassword`)
        return False
    if "/" in value and re.search(r"\.[a-z]{1,5}$", value):  # a file's path (`builds/app-2.4.1.tar.gz`)
        return False
    if re.fullmatch(r"[A-Za-z][A-Za-z.-]*[-_.][0-9a-f]{32,}", value):  # words and a digest: a cache key
        return False
    return len(value) >= 16 and classes >= 2 and _entropy(value) >= 3.2 and not re.fullmatch(r"[\d.]+", value)


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-")


# The library's names for what they are, as placeholders say them.
_KINDS = {"Basic Auth Credentials": "url-password", "AWS Access Key": "aws-access-key", "Slack Token": "slack-token",
          "OpenAI Token": "openai-key", "Stripe Access Key": "stripe-key", "NPM tokens": "npm-token"}
# Kinds that say where a secret sits, not what it is: a GitHub token as a URL's password is a
# GitHub token.
_GENERIC = frozenset({"url-password", "password", "secret"})


@lru_cache(maxsize=1)
def _library() -> tuple[tuple[str, re.Pattern], ...]:
    """detect-secrets' vendor patterns, as (kind, pattern); loaded on first need."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    skip = {"Base64 High Entropy String", "Hex High Entropy String", "Secret Keyword", "Public IP (ipv4)",
            "Private Key", "JSON Web Token"}  # ours: the whole block, the signature; an IP is no secret
    out = []
    for secret_type, plugin in sorted(get_mapping_from_secret_type_to_class().items()):
        if secret_type in skip:
            continue
        for n, pattern in enumerate(getattr(plugin, "denylist", ()) or ()):
            kind = "aws-secret" if secret_type == "AWS Access Key" and n else _KINDS.get(secret_type, _slug(secret_type))
            out.append((kind, pattern))
    return tuple(out)


@dataclass
class Redactor:
    """Replaces what it finds; `enabled` False leaves text as it is. `key` keys the hash that
    ends each placeholder (a home's own, so a guess cannot be checked against it); `key_source`
    gives it on the first placeholder, so that a home that never meets a secret writes no key."""
    key: bytes = b""
    enabled: bool = True
    patterns: Mapping[str, str] = field(default_factory=dict)
    key_source: Callable[[], bytes] | None = None

    def __post_init__(self) -> None:
        self._own = tuple((_slug(name), re.compile(p)) for name, p in self.patterns.items())

    def placeholder(self, kind: str, secret: str) -> str:
        if self.key_source is not None:
            self.key, self.key_source = self.key_source(), None
        return f"[redacted:{kind}:{hmac.new(self.key, secret.encode(), hashlib.sha256).hexdigest()[:6]}]"

    def find(self, text: str) -> list[Found]:
        """What would be replaced, without overlaps, in order."""
        spans: list[Found] = []
        spans += [Found("private-key", m.start(), m.end()) for m in _BLOCK.finditer(text)]
        if _LONG_RUN.search(text):
            for kind, pattern in (*_OURS, *_library()):
                spans += [_whole(text, _span(kind, m)) for m in pattern.finditer(text)]
        present = _words_in(text.casefold())  # each search below only where its words are
        for pattern in (_SAID[i][0] for i in sorted({i for w in present for i in _SAID_BY_WORD.get(w, ())})):
            kind = "password"
            for m in pattern.finditer(text):
                g = _given(m)
                if pattern is _PASSWORD and _in_prose(text[m.start():m.start(g)]):
                    continue
                if not _stands_in(text, m.start(g), m.end(g)):
                    spans.append(Found(kind, m.start(g), m.end(g)))
        if present.intersection(_SAID_WORDS):
            for m in SAID_PASSWORD.finditer(text):
                g = _given(m)  # a quoted value whole (`"purple monkey dishwasher 42"`)
                value = m.group(g) if g < 3 else m.group(g).rstrip(".:)")  # the sentence's end is not the password's
                # A word is no password (`the password is wrong`); a long run of letters is one.
                if not _stands_in(text, m.start(g), m.start(g) + len(value)) and (
                        re.search(r"[\d\W_]", value) or len(value) >= 14):
                    spans.append(Found("password", m.start(g), m.start(g) + len(value)))
            for m in SAID_PHRASE.finditer(text):
                if m.group(1).split()[0].casefold() not in NOT_A_PHRASE and not _stands_in(text, m.start(1), m.end(1)):
                    spans.append(Found("password", m.start(1), m.end(1)))
        if present.intersection(_KEYED_WORDS):
            for m in _KEYED.finditer(text):
                g = next(i for i in (2, 3, 4) if m.group(i) is not None)
                start = m.start(g) + (7 if m.group(g).startswith("base64:") else 0)  # Laravel's APP_KEY
                value = text[start:m.end(g)]
                named = text[max(0, m.start(1) - 16):m.end(1)].casefold()  # `public key:` names no secret
                if not ("public" in named or "websocket" in named) and not _stands_in(text, start, m.end(g)) \
                        and _random(value):
                    spans.append(Found("secret", start, m.end(g)))
            for m in SAID_KEY.finditer(text):
                named = text[max(0, m.start() - 16):m.start(1)].casefold()
                if not ("public" in named or "websocket" in named) and not _stands_in(text, m.start(1), m.end(1)) \
                        and _random(m.group(1)):
                    spans.append(Found("secret", m.start(1), m.end(1)))
        for pattern, words in ((_FLAG_KEYED, ("--",)), (_COOKIE, ("cookie",)), (_HEADER, ("x-",))):
            if present.intersection(words):
                spans += [Found("secret", m.start(1), m.end(1)) for m in pattern.finditer(text) if _random(m.group(1))]
        if "authorization" in present:
            spans += [Found("secret", m.start(1), m.end(1)) for m in _BEARER.finditer(text) if _random(m.group(1))]
        if _AWS_ID.search(text):
            spans += [Found("aws-secret", m.start(), m.end()) for m in _FORTY.finditer(text)
                      if all(re.search(c, m.group()) for c in ("[a-z]", "[A-Z]", r"\d"))]
        for kind, pattern in self._own:
            spans += [_span(kind, m) for m in pattern.finditer(text)]
        # `postgres://app:${DB_PASSWORD}@db`, `https://u:**@host`: where a secret goes, not one;
        # a SealedSecret's values are ciphertext only its cluster opens.
        # A run of one character (`ghp_xxxxxxxx...`) is a token's placeholder in docs.
        sealed = "kind: SealedSecret" in text
        return _disjoint(f for f in spans if (f.kind == "private-key" or not _REPEATED.search(text, f.start, f.end)) and (
            f.kind not in _GENERIC or not (sealed or _stands_in(text, f.start, f.end))))

    def redact(self, text: str) -> tuple[str, list[Found]]:
        if not self.enabled or not text:
            return text, []
        text = PRIVATE.sub("[private]", text) if "<private>" in text.casefold() else text
        found = self.find(text)
        out, at = [], 0
        for f in found:
            out += [text[at:f.start], self.placeholder(f.kind, text[f.start:f.end])]
            at = f.end
        return "".join(out) + text[at:], found

    def clean(self, text: str) -> str:
        return self.redact(text)[0]


_CLOSING = {"<": ">", "(": ")", "[": "]", "{": "}"}
_REPEATED = re.compile(r"([^\s-])\1{7,}")


def _in_prose(named: str) -> bool:
    """Whether a name and what follows it read as words, not an assignment: `in secret 'api-creds'`."""
    return not re.search(r"[:=(]", named) and named.strip(" \t\"'").casefold().endswith("secret")


def _stands_in(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] stands for a secret without being one. A quoted value that opens a
    bracket must close it too (`'<your key>'`): a generated salt may begin with `(`."""
    value = text[start:end]
    if value[:1] in _CLOSING and start and text[start - 1] in "'\"":
        return value[-1:] == _CLOSING[value[0]]
    return bool(_PLACEHOLDER.match(value))


def _given(m: re.Match) -> int:
    """The group that holds the value of a pattern that quotes it one of several ways."""
    return next(i for i in range(1, (m.lastindex or 0) + 1) if m.group(i) is not None)


def _span(kind: str, m: re.Match) -> Found:
    """The secret in a match: its first group when words before it place it (`://user:(pw)@`,
    `aws_secret = '(...)'`), else the whole match (a group that opens it names its prefix:
    `(ghp|gho)_...`), without the delimiters some library patterns include (`(?:\\s|=|:)AKC...`)."""
    if m.lastindex and m.start(1) > m.start() and m.group(1):
        return Found(kind, m.start(1), m.end(1))
    start, end = m.start(), m.end()
    while start < end and not m.string[start].isalnum():
        start += 1
    while end > start and m.string[end - 1] in " \t\n\"'":
        end -= 1
    return Found(kind, start, end)


_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_-]")


def _whole(text: str, f: Found) -> Found:
    """A vendor token to the end of its run: a pattern that counts 24 characters (Stripe's) must
    not leave the rest of a 99-character key behind."""
    if f.kind in _GENERIC or f.kind == "private-key":
        return f
    end = f.end
    while end < len(text) and _TOKEN_CHAR.match(text, end):
        end += 1
    return Found(f.kind, f.start, end)


def _disjoint(spans: Iterable[Found]) -> list[Found]:
    """The longest of overlapping spans, in order (a JWT inside a password assignment is one)."""
    out: list[Found] = []
    for f in sorted(spans, key=lambda f: (f.start, -(f.end - f.start), f.kind in _GENERIC)):
        if f.end <= f.start:
            continue
        if out and f.start < out[-1].end:
            if f.end > out[-1].end:
                out[-1] = Found(out[-1].kind, out[-1].start, f.end)
            continue
        out.append(f)
    return out
