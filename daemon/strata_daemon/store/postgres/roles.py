"""Login roles bound to namespaces (migration 3): what `strata store grant` and `revoke` write,
as the tables' owner."""

from __future__ import annotations

import re

from strata_daemon.errors import InvalidInput

ROLE = re.compile(r"[a-z_][a-z0-9_]{0,62}")
# What a bound role may not change: who is bound to what, what is shared, the schema's record.
KEPT = ("strata_roles", "strata_shared", "_migrations")


def _role(name: str) -> str:
    if not ROLE.fullmatch(name):
        raise InvalidInput(f"{name!r} is not a role name strata grants to",
                           hint="lower-case letters, digits and _, starting with a letter (at most 63)")
    return name


def grant(conn, role: str, agent: str, shared: list[str]) -> dict:
    """Bind ROLE to namespace AGENT: it may read and change that namespace's rows and read the
    SHARED ones (which replace those listed before), and nothing else. Inside a transaction."""
    role = _role(role)
    if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = ?", (role,)).fetchone():
        raise InvalidInput(f"no role {role!r} on the server",
                           hint=f"create it first: CREATE ROLE {role} LOGIN PASSWORD '...'")
    conn.execute("INSERT INTO strata_roles (role, agent) VALUES (?, ?) ON CONFLICT (role) DO UPDATE "
                 "SET agent = excluded.agent", (role, agent))
    conn.execute("DELETE FROM strata_shared")
    conn.executemany("INSERT INTO strata_shared (agent) VALUES (?)", [(a,) for a in shared])
    conn.execute(f"GRANT USAGE ON SCHEMA {_schema(conn)} TO {role}")
    conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {_schema(conn)} TO {role}")
    conn.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {_schema(conn)} TO {role}")
    conn.execute(f"REVOKE INSERT, UPDATE, DELETE ON {', '.join(KEPT)} FROM {role}")
    # So that its purges may rewrite the tables that held the words (VACUUM FULL; PostgreSQL 17+).
    # It reads no row by it: a rewrite copies every row without handing any to the role.
    maintain = conn.execute("SELECT current_setting('server_version_num')::int >= 170000").fetchone()[0]
    if maintain:
        conn.execute(f"GRANT MAINTAIN ON ALL TABLES IN SCHEMA {_schema(conn)} TO {role}")
    return {"role": role, "agent": agent, "shared": shared, "may_rewrite": bool(maintain)}


def revoke(conn, role: str) -> dict:
    role = _role(role)
    found = conn.execute("DELETE FROM strata_roles WHERE role = ? RETURNING agent", (role,)).fetchone()
    if found is None:
        raise InvalidInput(f"role {role!r} is bound to no namespace", hint="strata store roles lists them")
    conn.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA {_schema(conn)} FROM {role}")
    return {"role": role, "agent": found[0], "revoked": True}


def bound(conn) -> list[dict]:
    return [{"role": r, "agent": a} for r, a in conn.execute("SELECT role, agent FROM strata_roles ORDER BY role")]


def _schema(conn) -> str:
    return conn.execute("SELECT current_schema()").fetchone()[0]
