"""Migration 25: unbury the passed over."""

from __future__ import annotations

import json
import time

NAME = "unbury the passed over"


def up(conn) -> None:
    # Stale decay and the archive rule no longer act on feedback (consolidation/rules.py,
    # cold_reason): give back what they took for it. Each such change is in the audit with its
    # reason and the value before it; a memory consolidation still finds redundant or
    # contradicted is taken again on the next night, with that reason.
    rows = conn.execute("SELECT agent, item_id, action, data FROM audit WHERE item_kind = 'episode' "
                        "AND action IN ('consolidate:stale', 'consolidate:archive') "
                        "AND json_extract(data, '$.reason') LIKE '%unhelpful:%' ORDER BY id").fetchall()
    confidence, cold = {}, set()
    for agent, episode, action, data in rows:
        if action == "consolidate:stale":
            confidence.setdefault((agent, episode), json.loads(data).get("before", {}).get("confidence", 1.0))
        else:
            cold.add((agent, episode))
    now = time.time()
    conn.executemany("UPDATE episodes SET confidence = max(confidence, ?), stale_at = NULL WHERE agent = ? AND id = ?",
                     [(c, agent, episode) for (agent, episode), c in confidence.items()])
    conn.executemany("UPDATE episodes SET tier = 'hot', tier_at = ? WHERE agent = ? AND id = ? AND tier = 'cold' "
                     "AND state = 'active'", [(now, agent, episode) for agent, episode in cold])
