"""The capsule's pending tasks are open tasks: what a memory states as to do (or a memory of
kind task), until a later memory closes it; never a line that merely holds "pending" or
"to do"."""

from __future__ import annotations

import re

from strata_daemon.capsule import document

T0 = 1_790_000_000.0
H, DAY = 3600.0, 86400.0


def test_pending_tasks_are_the_open_tasks_and_nothing_else(memory, home):
    said = {}

    def observe(text, at, kind=None):
        said[text] = memory.observe(text, at=T0 - at, kind=kind)["id"]

    # not tasks, though the old word list took them
    observe("apt upgrade ran on web-3, nothing to do", 5 * H)
    observe("Dana approved the launch for 2026-05-19, pending the penetration test results.", 6 * H)
    observe("Decided to postpone the follow-up on the invoice to next week", 7 * H, kind="decision")
    observe("Blocked on the vendor for the new router", 8 * H)
    # tasks, stated as to do
    observe("TODO: renew the TLS cert on gw-01 before 2026-10-01", 2 * DAY)
    observe("need to call the landlord about the heating", 2 * DAY)
    observe("- [ ] write the quarterly report", 3 * DAY)
    observe("Task: migrate the NAS to the new disks", 3 * DAY)
    observe("remind me to pay the rent on Friday", 4 * DAY)
    observe("follow up with Dana about the contract", 4 * DAY)
    observe("rotate the API keys", 5 * DAY, kind="task")
    observe("TODO T-7: prune old snapshots on nas-01", 6 * DAY, kind="task")
    # closings: a task-kind report of one done is no task, and closes its own
    observe("Done T-7: pruned 40 old snapshots on nas-01", DAY, kind="task")
    observe("called the landlord about the heating, done", DAY)
    memory.render_capsule(now=T0)
    text = (home / "capsule" / "CAPSULE.md").read_text(encoding="utf-8")
    lines = document.parse(text).block_lines("tasks")
    shown = {int(re.search(r"\[e(\d+)\]$", ln).group(1)) for ln in lines}
    expected = {said[t] for t in ("TODO: renew the TLS cert on gw-01 before 2026-10-01",
                                  "- [ ] write the quarterly report", "Task: migrate the NAS to the new disks",
                                  "remind me to pay the rent on Friday", "follow up with Dana about the contract",
                                  "rotate the API keys")}
    assert shown == expected
    assert lines[0].endswith(f"(due 2026-10-01) (open 2 days) "
                             f"[e{said['TODO: renew the TLS cert on gw-01 before 2026-10-01']}]")
    # What is not a task is recent work like any other line.
    recent = "\n".join(document.parse(text).block_lines("recent"))
    assert "nothing to do" in recent and "pending the penetration test" in recent


def test_a_pending_task_stays_pending_however_old_it_grows_until_it_is_done(memory, home):
    # A task never done fell out of the pending block after capsule.task_days (60), though
    # pending work is what an agent waking up must see.
    def pending(now):
        memory.render_capsule(now=now)
        text = (home / "capsule" / "CAPSULE.md").read_text(encoding="utf-8")
        return [re.sub(r" \[e\d+\]$", "", ln) for ln in document.parse(text).block_lines("tasks")]

    memory.observe("TODO: migrate the nightly backup job to the new NAS", at=T0 - 120 * DAY)
    memory.observe("TODO T-31: archive the 2024 invoices", at=T0 - 110 * DAY, kind="task")
    memory.observe("need to replace the UPS battery in the rack", at=T0 - 105 * DAY)
    assert len(pending(T0 - 100 * DAY)) == 3  # all three in the window then
    memory.observe("Done T-31: archived the 2024 invoices", at=T0 - 90 * DAY)
    memory.observe("replaced the UPS battery in the rack, done", at=T0 - 2 * DAY)
    assert pending(T0) == ["- [ ] TODO: migrate the nightly backup job to the new NAS (open 120 days)"]
    memory.observe("migrated the nightly backup job to the new NAS, done", at=T0 + H)
    assert pending(T0 + 2 * H) == []


def test_a_homes_first_render_lists_its_open_tasks_of_any_age(memory, home):
    # A home imported with months of history listed none of its old TODOs: only tasks carried
    # from one render to the next stayed, and the first had none to carry.
    memory.observe("TODO: renew the domain before it lapses", at=T0 - 240 * DAY)
    memory.observe("TODO: rotate the backup keys", at=T0 - 200 * DAY)
    memory.observe("rotated the backup keys, done", at=T0 - 150 * DAY)
    for n in range(3):
        memory.render_capsule(now=T0 + n * DAY)
        text = (home / "capsule" / "CAPSULE.md").read_text(encoding="utf-8")
        assert [re.sub(r" \[e\d+\]$", "", ln) for ln in document.parse(text).block_lines("tasks")] == [
            f"- [ ] TODO: renew the domain before it lapses (open {240 + n} days)"]
