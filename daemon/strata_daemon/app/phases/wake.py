"""What the wake step reads on stdin: the capsule (its last good render when the file is
broken), then the dossiers named in [loop.wake] dossiers, or the newest refreshed ones."""

from __future__ import annotations

from strata_daemon.errors import StrataError
from strata_daemon.store import dossiers as dossier_store

DEFAULT_MAX_DOSSIERS = 5


def _dossiers(conn, agent: str, names: list[str] | None, limit: int) -> list[dict]:
    states = dossier_store.states(conn, agent)
    if names is None:
        names = sorted((t for t, s in states.items() if s["version"]), key=lambda t: -(states[t]["refreshed_at"] or 0))
        names = names[:limit]
    found = (dossier_store.version(conn, agent, n) for n in names)
    return [d for d in found if d is not None]


async def wake_input(mem, spec: dict) -> bytes:
    try:
        shown = await mem.show_capsule()
        if not shown["ok"]:
            shown = await mem.show_capsule(last_good=True)
        capsule = shown["text"]
    except StrataError as e:  # no capsule yet: the agent still gets its dossiers and the reason
        capsule = f"(no capsule: {e.message})\n"
    names = spec.get("dossiers")
    limit = int(spec.get("max_dossiers", DEFAULT_MAX_DOSSIERS))
    dossiers = await mem.db.run(_dossiers, mem.agent, names, limit)
    parts = [capsule.rstrip("\n") + "\n"]
    for d in dossiers:
        parts.append(f"\n---\n\n# Dossier: {d['topic']} (version {d['version']}, {d['created_at_iso']})\n\n"
                     + d["text"].rstrip("\n") + "\n")
    return "".join(parts).encode("utf-8")
