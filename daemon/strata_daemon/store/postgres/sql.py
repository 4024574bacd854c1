"""A statement written for SQLite, spelled for PostgreSQL: what differs only in spelling, and
nothing else. Pure; connection.py applies it to every statement it runs.

- `?` parameters become `%s`, and a literal `%` is doubled, outside quotes (psycopg's format).
- `BEGIN IMMEDIATE` (SQLite takes the write lock at once) becomes `BEGIN` and a transaction-
  scoped advisory lock: one writer at a time on the whole store, as on SQLite, so the store's
  read-then-write steps (the next id, a repeat folded in) stay correct with many daemons.
- `INSERT OR IGNORE` becomes `ON CONFLICT DO NOTHING`; `INSERT OR REPLACE` an upsert on the
  table's key (KEYS, from the schema), setting every other column inserted.
- An INSERT into a table with an `id` of its own returns it, for the cursor's `lastrowid`.
- SQLite's scalar `max(a, b)` and `min(a, b)` are GREATEST and LEAST; `instr` is `strpos`;
  REAL (a double in SQLite) is double precision; `+col`, SQLite's hint not to use an index, goes.
- SQLite's `a IS b` and `a IS NOT b` between values are IS [NOT] DISTINCT FROM; its `CROSS
  JOIN ... ON` (a hint to keep the join order) is a plain JOIN; `length(CAST(x AS BLOB))`, a
  text's bytes, is octet_length(x).

What differs in meaning (full text, vectors, JSON paths, pragmas) is written for each store in
the store module that needs it, never guessed here."""

from __future__ import annotations

import functools
import re

# A lock number strata's writers share (any 64-bit constant; "strata" in ASCII).
WRITE_LOCK = 0x737472617461
BEGIN = f"BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})"

# The conflict target of each table an `INSERT OR REPLACE` writes, and the tables whose rows get
# an `id` from a sequence. The schema (migrations/m001_schema.py) is where both come from.
KEYS = {"meta": ("key",), "fts_term_counts": ("term",)}
WITH_ID = frozenset({
    "access_events", "arena_choices", "arena_episodes", "arena_runs", "audit", "capsule_overrides",
    "capsule_renders", "dossier_versions", "episodes", "fact_conflicts", "fact_values", "facts",
    "feedback_events", "phase_runs", "recalls", "strength_snapshots",
})

_INSERT = re.compile(r"^\s*INSERT\s+(?:OR\s+(IGNORE|REPLACE)\s+)?INTO\s+([\w.]+)\s*(?:\(([^)]*)\))?", re.I)


def _placeholders(sql: str, with_params: bool) -> str:
    """`?` to `%s` and `%` to `%%` outside single-quoted strings and double-quoted names."""
    out, quote = [], None
    for ch in sql:
        if quote:
            out.append("%%" if ch == "%" and with_params else ch)
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            out.append(ch)
        elif ch == "?":
            out.append("%s")
        elif ch == "%" and with_params:
            out.append("%%")
        else:
            out.append(ch)
    return "".join(out)


_SCALAR = {"max": "GREATEST", "min": "LEAST"}
_CALL = re.compile(r"\b(max|min|instr)\s*\(", re.I)


def _functions(sql: str) -> str:
    """SQLite's functions under PostgreSQL's names: max/min of several arguments, instr."""
    out, last = [], 0
    for m in _CALL.finditer(sql):
        name = m.group(1).lower()
        depth, i, top_comma = 1, m.end(), False
        while i < len(sql) and depth:
            ch = sql[i]
            depth += ch == "("
            depth -= ch == ")"
            top_comma |= ch == "," and depth == 1
            i += 1
        if name == "instr":
            out += [sql[last:m.start()], "strpos("]
        elif top_comma:
            out += [sql[last:m.start()], _SCALAR[name], "("]
        else:
            continue
        last = m.end()
    return "".join(out) + sql[last:]


def _clause_before_returning(sql: str, clause: str) -> str:
    found = re.search(r"\bRETURNING\b", sql, re.I)
    return f"{sql.rstrip().rstrip(';')} {clause}" if not found else (
        f"{sql[:found.start()].rstrip()} {clause} {sql[found.start():]}")


@functools.lru_cache(maxsize=4096)
def translate(sql: str, with_params: bool = True) -> tuple[str, bool]:
    """(PostgreSQL's statement, whether it returns the ids it inserted)."""
    if re.fullmatch(r"\s*BEGIN\s+IMMEDIATE\s*;?\s*", sql, re.I):
        return BEGIN, False
    returns_id = False
    found = _INSERT.match(sql)
    if found:
        how, table, columns = found.group(1), found.group(2), found.group(3)
        sql = "INSERT INTO " + sql[found.start(2):]
        if how and how.upper() == "IGNORE":
            sql = _clause_before_returning(sql, "ON CONFLICT DO NOTHING")
        elif how:
            keys = KEYS.get(table)
            if keys is None or not columns:
                raise ValueError(f"INSERT OR REPLACE into {table}: no key known for PostgreSQL")
            rest = [c.strip() for c in columns.split(",") if c.strip() not in keys]
            sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in rest)
            sql = _clause_before_returning(sql, f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {sets}")
        if table in WITH_ID and not re.search(r"\bRETURNING\b", sql, re.I):
            sql, returns_id = f"{sql.rstrip().rstrip(';')} RETURNING id", True
    sql = _functions(sql)
    sql = re.sub(r"\bAS\s+REAL\b", "AS double precision", sql, flags=re.I)
    sql = re.sub(r"(^|[\s(,=])\+(?=[A-Za-z_])", r"\1", sql)
    sql = re.sub(r"\bIS\s+NOT\s+(?!NULL\b|TRUE\b|FALSE\b|DISTINCT\b)", "IS DISTINCT FROM ", sql, flags=re.I)
    sql = re.sub(r"\bIS\s+(?!NOT\b|NULL\b|TRUE\b|FALSE\b|DISTINCT\b)", "IS NOT DISTINCT FROM ", sql, flags=re.I)
    sql = re.sub(r"\blength\(\s*CAST\(\s*([\w.]+)\s+AS\s+BLOB\s*\)\s*\)", r"octet_length(\1)", sql, flags=re.I)
    sql = re.sub(r"\bCROSS\s+JOIN\s+(\w+(?:\s+\w+)?)\s+ON\b", r"JOIN \1 ON", sql, flags=re.I)
    return _placeholders(sql, with_params), returns_id
