"""docs/reference/config.md: every setting of the settings table, by section, and how settings
are set."""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from strata_bench.reference.markdown import NOTE, anchor, code, finish, table


def _closure(fn: Callable) -> dict[str, Any]:
    cells = fn.__closure__ or ()
    return dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in cells)))


def _number(v: Any) -> str:
    return f"{v:,}" if isinstance(v, int) and abs(v) >= 10000 else f"{v:g}" if isinstance(v, float) else str(v)


def _allowed(check: Callable | None) -> str:
    """What a setting's check accepts, in words, for the checks settings.py builds from its helpers."""
    if check is None:
        return ""
    name = getattr(check, "__qualname__", "")
    env = _closure(check) if getattr(check, "__closure__", None) else {}
    if name.startswith("_optional."):
        return _allowed(env.get("check"))
    if name.startswith("_between."):
        return f"{_number(env['lo'])} to {_number(env['hi'])}"
    if name.startswith("_one_of."):
        return "one of " + ", ".join(code(json.dumps(c)) for c in env["choices"])
    return {"_positive": "above 0", "_non_negative": "0 or more", "_factor": "above 0, at most 1",
            "_kinds": "a non-empty list of simple words", "_namespace": "a namespace name",
            "_namespaces": "namespace names", "_regex": "a regular expression",
            "_rule_names": "names of consolidation rules", "_arm_names": "MODE or MODE+PRESET",
            "_rules_table": "one table per rule", "_topics_table": "one table per topic",
            "_steps_table": "one table per step", "_wake_table": "a step's table",
            "_presets_table": "one table per preset"}.get(name, "")


def config_markdown() -> str:
    from strata_daemon.config.home import ENV_VAR
    from strata_daemon.config.load import _TYPE_WORDS, _toml_value
    from strata_daemon.config.overrides import KEYS
    from strata_daemon.config.settings import SETTINGS
    from strata_daemon.errors import ConfigError

    sections: dict[str, list] = {}
    for s in SETTINGS:
        sections.setdefault(s.section, []).append(s)
    lines = ["# Configuration reference", "", NOTE, "",
             f"strata reads {len(SETTINGS)} settings. Every one has a default, so a home needs no configuration "
             "at all.", "",
             "## How settings are set", "",
             "- **strata.toml in the home.** The home folder (`--home`, else the `" + ENV_VAR + "` environment "
             "variable, else the per-user data folder) holds `strata.toml`. A setting `section.name` is the line "
             "`section.name = value` above the file's first table, or `name = value` below a `[section]` line; a "
             "setting that is left out keeps its default. `strata init` writes the file with every setting "
             "commented out at its default in the first form, its description above it: uncomment a line to "
             "change a setting, and add tables (`[http]`, `[loop.steps.NAME]`) at the end of the file.",
             "- **Checked when read.** An unknown key, a value of the wrong type or one out of range stops the "
             f"command with exit code {ConfigError.exit_code}, naming the file and the key; the hint repeats the "
             "setting's description and default.",
             "- **`strata config show`** prints every setting's effective value and where it came from (the "
             "default or the file); `--json` for programs.",
             "- **The daemon** (`strata run`) reads the file again on SIGHUP; a broken file is reported in the log "
             "and the running configuration kept.",
             "- **The retrieval arena** (`arena.enabled`) may lay a preset's tuned constants (`recall.*`, "
             "`scoring.*`) over the file for recalls that name no mode; `strata arena status` says which.",
             "- **`--set KEY=VALUE`** exists only on `strata bench recall`, for the benchmark's temporary home. "
             "No environment variable sets a setting but one: `STRATA_DATABASE_URL` takes `store.url`'s place "
             "(a password kept out of the file); `" + ENV_VAR + "` only chooses the home.", "",
             "## Tuned constants and [experimental]", "",
             f"Beside these settings, strata weighs {len(KEYS)} tuned constants (fusion weights, spreading shares, "
             "the Hebbian rules, consolidation's thresholds, the arena's reward): `config/tuning.py` in the source "
             "gives each one's value, why it has it and the measurement that chose it. A person does not set "
             "them. For an experiment, one can be changed by its name in an `[experimental]` table, e.g. "
             '`"recall.vector_weight" = 0.9`; only its type is checked (and that a length of time is not '
             "negative), and a constant may be renamed or go in any release: the table carries no promise. "
             "`strata config show --experimental` lists every one with its value (and [below](#tuned-constants) "
             "with its default), `strata config show` what the table changes, and `strata bench` takes the same "
             "names "
             "(`--set`, `--grid`). A default changes only when the leave-conversations-out protocol "
             "(`strata bench locomo --folds`) shows a gain on conversations it was not chosen on.", "",
             "A default below is written as the line strata.toml would hold below its `[section]` line. A "
             "setting whose default is *unset* "
             "has no line at all (TOML has no null): leave it out and strata uses what its description says.",
             "", "## Sections", ""]
    lines += [f"- [`[{section}]`](#{anchor(section)}): " + ", ".join(f"`{s.name}`" for s in items)
              for section, items in sections.items()]
    lines.append("")
    for section, items in sections.items():
        lines += [f"## [{section}]", ""]
        for s in items:
            lines += [f"### {s.key}", "", re.sub(r"\s+", " ", s.doc).strip(), ""]
            if s.default is None:
                default = f"unset ({s.unset_meaning})"
            else:
                default = code(f"{s.name} = {_toml_value(s.default)}")
            kind = _TYPE_WORDS.get(s.value_type, s.value_type.__name__)
            allowed = _allowed(s.check)
            lines += [f"- Default: {default}", f"- Type: {kind}" + (f"; {allowed}" if allowed else ""), ""]
    lines += ["## Tuned constants", "", "The names messages and `[experimental]` use, with their defaults (no "
              "promise: see above).", ""]
    lines += table(("constant", "default"), [(code(k), "unset" if default is None else code(_toml_value(default)))
                                             for k, (_, default) in KEYS.items()])
    return finish(lines)
