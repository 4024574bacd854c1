"""The corpus generator's own knowledge (what each line is about, which lines are states, which
tasks it opened and closed) and the judges that hold strata's dossiers and capsule against it."""

from __future__ import annotations

import re

from strata_bench import corpus
from strata_bench.corpus import Label, labelled, observations
from strata_bench.truth import capsule_blocks, dossier_lines, topic_precision
from strata_daemon.capsule.api import EXAMPLE

_TASK = re.compile(r"T-(\d+)")


def test_labels_ride_on_the_same_stream():
    pairs = list(labelled(3000, seed=3))
    assert [o for o, _ in pairs] == list(observations(3000, seed=3))
    assert all(isinstance(label, Label) for _, label in pairs)


def test_labels_know_states_tasks_and_subjects():
    pairs = list(labelled(6000, seed=5))
    opened, closed = {}, {}
    for o, label in pairs:
        text = o["content"]
        if label.task and label.task[0] == "open":
            assert text.startswith(("TODO T-", "New task T-")) and int(_TASK.search(text).group(1)) == label.task[1]
            opened[label.task[1]] = label.subjects
        elif label.task:
            assert text.startswith(("Done T-", "Closed T-")) and int(_TASK.search(text).group(1)) == label.task[1]
            closed.setdefault(label.task[1], label.subjects)
        if label.state:
            assert label.family == "status" and re.match(r"^[A-Z][a-z ]+(: (UP|DOWN) | still DOWN)", text)
            service = text.split(":")[0].split(" still")[0].lower()
            assert service in label.subjects
    assert opened and closed and set(closed) <= set(opened)
    # A closing line is about what its task was about, though it names less of it.
    assert all(closed[i] == opened[i] for i in closed)
    lesson = next(label for o, label in pairs if "before reloading the web proxy" in o["content"])
    assert "web proxy" in lesson.subjects  # named by the template itself, not by a slot
    email = next(label for o, label in pairs if o["content"].startswith("Email from Amara Okafor"))
    assert "Amara Okafor" in email.subjects
    assert all(not label.state for o, label in pairs if ": " in o["content"] and label.family == "metric")


def _label(*subjects, family="note", task=None):
    return Label(family, frozenset(subjects), task)


def test_a_dossier_line_is_on_topic_when_every_memory_it_cites_is():
    text = """# Bridge

## Current facts

- Bridge: "UP" (since 2026-06-30 10:00Z) [f2, e1]

## Key older context

- 2026-06-01 10:00Z (note) the bridge and the relay [e1, e2]
- 2026-06-01 10:00Z (note) Backup: OK [e3]
- 2026-06-01 10:00Z (note) nothing cited
"""
    labels = {1: _label("bridge", family="status"), 2: _label("bridge", "mail relay"), 3: _label("backup job")}
    assert dossier_lines(text) == [('Bridge: "UP" (since 2026-06-30 10:00Z)', [1]),
                                   ("2026-06-01 10:00Z (note) the bridge and the relay", [1, 2]),
                                   ("2026-06-01 10:00Z (note) Backup: OK", [3])]
    got = topic_precision({"bridge": text, "empty": "# Empty\n\nNothing is known about this topic yet.\n"},
                          {"bridge": "bridge", "empty": "x"}, labels)
    assert got["by_topic"]["bridge"] == {"lines": 3, "on_topic": 2, "precision": 0.6667}
    assert (got["mean"], got["min"], got["empty_dossiers"]) == (0.6667, 0.6667, 1)
    labels[3] = _label("bridge")
    assert topic_precision({"bridge": text}, {"bridge": "bridge"}, labels)["min"] == 1.0


def test_capsule_facts_are_judged_by_their_source_and_tasks_by_the_generator():
    text = EXAMPLE.read_text(encoding="utf-8")
    text = text.replace("<!-- strata:begin facts -->\n", "<!-- strata:begin facts -->\n- Bridge: UP\n"
                        "- gw 01 memory: 555 MiB free\n- backup window: 03:00\n- unexplained: line\n")
    text = text.replace("<!-- strata:begin tasks -->\n", "<!-- strata:begin tasks -->\n- [ ] TODO T-1: a [e10]\n"
                        "- [ ] TODO T-2: b [e11]\n- [ ] Done T-3: c [e13]\n")
    facts = [{"label": "Bridge", "value": "UP", "source": "episode:1"},
             {"label": "gw 01 memory", "value": "555 MiB  free", "source": "episode:2"},
             {"label": "backup window", "value": "03:00", "source": "person"}]
    labels = {1: _label("bridge", family="status"), 2: _label("gw-01", family="metric"),
              10: _label(task=("open", 1)), 11: _label(task=("open", 2)), 12: _label(task=("close", 2)),
              13: _label(task=("close", 3)), 14: _label(task=("open", 4))}
    got = capsule_blocks(text, facts, labels, visible=[10, 11, 12, 13, 14])
    assert (got["fact_lines"], got["fact_state_lines"], got["fact_state_share"]) == (4, 2, 0.5)
    assert (got["task_lines"], got["task_open_lines"], got["task_open_share"]) == (3, 1, 0.3333)
    assert got["open_tasks_visible"] == 2  # T-1 and T-4; T-2 was closed


def test_corpus_names_literal_subjects_it_holds_in_its_templates():
    assert "web proxy" in corpus._LITERAL and "bridge" not in corpus._LITERAL


def test_bench_dossier_reports_the_topic_precision_of_every_dossier(cli):
    """Balanced recall on a small corpus hands each topic many memories about something else
    (before dossiers kept to their topic, 0.43 of the lines were about it here, 0.2 at worst)."""
    r = cli.json("bench", "dossier", "--n", "400", "--refreshes", "1", "--no-llm")
    p = r["topic_precision"]
    assert set(p["by_topic"]) == {"bridge", "mail_relay", "dns_resolver", "vpn_tunnel", "task_queue", "amara_okafor",
                                  "mei_lindqvist", "ledger_sync", "invoice_bot", "backup_job"}
    assert p["lines"] == sum(t["lines"] for t in p["by_topic"].values()) > 0
    assert p["min"] >= 0.9 and p["mean"] >= p["min"]
    assert "p95_ms" in r and "lines_per_dossier" in r  # the fields it had stay


def test_bench_dossier_times_the_llm_quiet_and_beside_a_busy_process(cli, small_llm):
    r = cli.json("bench", "dossier", "--n", "200", "--refreshes", "1", "--llm", str(small_llm), "--llm-topics", "1",
                 timeout=600)
    quiet, busy = r["llm"], r["llm"]["busy_neighbour"]
    assert quiet["dossiers"] == busy["dossiers"] == 1
    assert quiet["generation_tokens_per_s"] > 0 and busy["generation_tokens_per_s"] > 0, r["llm"]


def test_bench_capsule_reports_what_its_facts_and_tasks_are(cli):
    r = cli.json("bench", "capsule", "--n", "600", "--renders", "1", "--edits", "1")
    assert r["task_lines"] > 0 and r["task_open_share"] == 1.0 and r["open_tasks_visible"] >= r["task_open_lines"]
    assert r["fact_lines"] > 0 and 0 <= r["fact_state_share"] <= 1
    assert "p95_ms" in r and "watch_p95_s" in r
