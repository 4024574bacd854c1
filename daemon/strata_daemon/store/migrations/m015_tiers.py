"""Migration 15: tiers."""

from __future__ import annotations

from strata_daemon.store.migrations.script import run_script

NAME = "tiers"


SQL = """
-- Forgetting demotes, it never hides. Consolidation moves a memory between the hot tier (what
-- the capsule, dossiers and working set draw on) and the cold tier; recall reaches both, the
-- cold one ranking lower. Only an explicit forget (state archived) takes a memory out of recall.
ALTER TABLE episodes ADD COLUMN tier TEXT NOT NULL DEFAULT 'hot' CHECK (tier IN ('hot', 'cold'));
ALTER TABLE episodes ADD COLUMN tier_at REAL;  -- when it last moved between tiers
UPDATE episodes SET tier = 'cold' WHERE state = 'superseded';
-- Counts by state and tier (`strata status`, the inspector) from the index, as by state before.
DROP INDEX episodes_by_state;
CREATE INDEX episodes_by_state ON episodes(agent, state, tier);
-- Before tiers, consolidation's archive rule set state archived, which hid the memory: such a
-- memory becomes an active one in the cold tier. One archived by `strata forget` stays archived.
CREATE TEMP TABLE cooled AS
    SELECT e.id FROM episodes e WHERE e.state = 'archived' AND (
        SELECT a.action FROM audit a WHERE a.item_kind = 'episode' AND a.item_id = e.id
        AND (a.action = 'consolidate:archive' OR a.action = 'state') ORDER BY a.id DESC LIMIT 1
    ) = 'consolidate:archive';
UPDATE episodes SET state = 'active', tier = 'cold', tier_at = updated_at WHERE id IN (SELECT id FROM cooled);
INSERT INTO audit (at, agent, item_kind, item_id, action, data, actor)
    SELECT unixepoch('subsec'), e.agent, 'episode', e.id, 'state',
           json_object('from', 'archived', 'to', 'active', 'tier', 'cold',
                       'reason', 'migration 15: archived by consolidation, now in the cold tier'),
           'migration'
    FROM episodes e WHERE e.id IN (SELECT id FROM cooled);
DROP TABLE cooled;
"""


def up(conn) -> None:
    run_script(conn, SQL)
