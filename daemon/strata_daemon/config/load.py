"""Effective configuration: the settings table, overlaid by the home's strata.toml."""

from __future__ import annotations

import difflib

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strata_daemon.base import bounded
from strata_daemon.base.wording import quoted
from strata_daemon.config import overrides
from strata_daemon.config.settings import BY_KEY, SETTINGS, Setting
from strata_daemon.config.tuning import Tuning
from strata_daemon.errors import ConfigError


@dataclass
class Config:
    """The settings (by key: `config["recall.k"]`, typed as the table says) and the tuned constants
    (`config.tuning.recall.vector_weight`), with [experimental]'s overrides laid over them."""
    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    path: Path | None = None
    tuning: Tuning = field(default_factory=Tuning)
    experimental: dict[str, Any] = field(default_factory=dict)  # the overrides, by the constant's name

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def rows(self) -> list[dict]:
        """Every setting, then each tuned constant [experimental] changes."""
        return [
            {"key": s.key, "value": self.values[s.key], "default": s.default,
             "source": self.sources[s.key], "doc": s.doc}
            for s in SETTINGS
        ] + [{"key": f"{overrides.SECTION}.{k}", "value": v, "default": overrides.KEYS[k][1],
              "source": str(self.path), "doc": "a tuned constant changed for an experiment (no promise)"}
             for k, v in self.experimental.items()]


    def constants(self) -> list[dict]:
        """Every tuned constant: its value here, its default, and whether [experimental] changed it."""
        return [{"key": k, "value": self.experimental.get(k, default), "default": default,
                 "source": str(self.path) if k in self.experimental else "default"}
                for k, (_, default) in overrides.KEYS.items()]


MAX_DEPTH = 8  # levels of tables; strata's own settings use three at most ([dossier.topics.NAME])


def _flatten(table: dict, path: Path) -> dict[str, Any]:
    """dotted key -> value, in the file's order. Iterative, and refusing a key nested past
    MAX_DEPTH: a file can nest far deeper than Python recurses."""
    flat: dict[str, Any] = {}
    stack = [(iter(table.items()), "")]
    while stack:
        items, prefix = stack[-1]
        item = next(items, None)
        if item is None:
            stack.pop()
            continue
        key, value = f"{prefix}{item[0]}", item[1]
        if isinstance(value, dict) and key not in BY_KEY and key.removeprefix(overrides.SECTION + ".") not in \
                overrides.KEYS:
            if len(stack) >= MAX_DEPTH:
                raise ConfigError(f"{path}: the key {quoted(key)} is nested more than {MAX_DEPTH} levels deep",
                                  hint="strata's settings are at most three levels deep; fix the file")
            stack.append((iter(value.items()), key + "."))
        else:
            flat[key] = value
    return flat


LIMIT = bounded.MIB  # the fully commented file strata init writes is about 25 KiB
_TYPE_WORDS = {float: "a number", int: "a whole number", str: "a string", list: "a list", bool: "true or false",
               dict: "a table"}


def _coerce(setting: Setting, value: Any, where: str) -> Any:
    expected = setting.value_type
    ok = isinstance(value, expected) and not (isinstance(value, bool) and expected is not bool)
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        value, ok = float(value), True
    bad = None if ok else f"must be {_TYPE_WORDS.get(expected, expected.__name__)}"
    if bad is None and setting.check is not None:
        bad = setting.check(value)
    if bad:
        raise ConfigError(f"{where}: {setting.key} = {json.dumps(value, default=str)} {bad}",
                          hint=_fix_hint(setting, where))
    return value


def _fix_hint(setting: Setting, where: str) -> str:
    """How to mend a bad value: the line to write (the default's), where, and what it sets."""
    default = json.dumps(setting.default)
    if where == "--set":
        fix = f"give --set {setting.key}={default}, or another value of that kind"
    else:  # the file may set it as `recall.k = ...` or as `k = ...` under [recall]: where it does, mend it
        fix = (f"give {setting.key} {default} (the default) or another value of that kind where the file sets it, "
               "or delete that line to use the default")
    return f"{fix}. It is: {setting.doc}"


def _toml_hint(message: str) -> str:
    twice = re.match(r"Cannot declare \(([^)]*)\) twice", message)
    if twice:
        table = ".".join(re.findall(r"'([^']*)'", twice.group(1)))
        return (f"[{table}] is given twice: by two [{table}] lines, or by a {table}.NAME = line above a [{table}] "
                f"line; keep one (settings under one [{table}], or each as {table}.NAME = value above the first "
                "table)")
    if message.startswith("Cannot overwrite a value"):
        return "a setting is given twice: keep one of the two lines"
    return "fix the line named, or move the file away"


def _unknown_hint(key: str) -> str:
    """What a person probably meant by a key no setting has."""
    meant = next((s.key for s in SETTINGS if key.endswith("." + s.key)), None)
    if meant:  # `recall.k = 3` added below a table: TOML reads it as part of that table
        return (f"the line {meant} = ... sits below the table [{key.removesuffix('.' + meant)}], so it belongs "
                "to it; move it above the file's first [table] line")
    meant = next((s.key for s in SETTINGS if s.name == key), None)
    if meant:
        return (f"outside a table a setting is named whole: {meant} = ..., or {key} = ... below "
                f"[{BY_KEY[meant].section}]")
    if key in overrides.KEYS or (key.startswith("web.") and "graph." + key[4:] in overrides.KEYS):
        name = key if key in overrides.KEYS else "graph." + key[4:]
        return (f"{name} is a tuned constant now, no longer a setting (config/tuning.py says why it has its value); "
                f"to try another value, set \"{name}\" under [experimental], which carries no promise, "
                "or remove the line")
    near = difflib.get_close_matches(key, [s.key for s in SETTINGS], n=2, cutoff=0.75)
    if near:
        return f"did you mean {' or '.join(near)}? `strata config show` lists every setting"
    return "`strata config show` lists every setting"


def load_config(path: Path | None) -> Config:
    cfg = Config(values={s.key: s.default for s in SETTINGS}, sources={s.key: "default" for s in SETTINGS},
                 path=path)
    if path is None:
        return cfg
    text = bounded.read_text(path, LIMIT, error=ConfigError, hint="strata.toml must be a UTF-8 text file; "
                             "fix it or move it away (strata init writes a commented one)")
    if text is None:
        return cfg
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} is not valid TOML: {e}", hint=_toml_hint(str(e))) from None
    except RecursionError:
        raise ConfigError(f"{path} nests its tables or arrays too deeply to read",
                          hint="strata's settings are at most two levels deep; fix the file") from None
    for key, value in _flatten(raw, path).items():
        if key.startswith(overrides.SECTION + "."):
            name = key.removeprefix(overrides.SECTION + ".")
            bad = overrides.problem(name, value)
            if bad:
                raise ConfigError(f"{path}: [{overrides.SECTION}] {name} = {json.dumps(value, default=str)} {bad}",
                                  hint="[experimental] takes a tuned constant by its name; it carries no promise")
            cfg.experimental[name] = overrides.coerced(name, value)
            continue
        setting = BY_KEY.get(key)
        if setting is None:
            raise ConfigError(f"{path}: unknown setting {quoted(key)}", hint=_unknown_hint(key))
        cfg.values[key] = _coerce(setting, value, str(path))
        cfg.sources[key] = str(path)
    cfg.tuning = overrides.laid_over(cfg.tuning, cfg.experimental)
    if cfg.values["store.default_kind"] not in cfg.values["store.kinds"]:
        raise ConfigError(f"{path}: store.default_kind {cfg.values['store.default_kind']!r} is not in store.kinds")
    steps = {**cfg.values["loop.steps"], **({"wake": cfg.values["loop.wake"]} if cfg.values["loop.wake"] else {})}
    for name, spec in steps.items():
        if spec.get("kind", cfg.values["store.default_kind"]) not in cfg.values["store.kinds"]:
            raise ConfigError(f"{path}: loop step {name}: kind {spec['kind']!r} is not in store.kinds")
    return cfg


def overlay(cfg: Config, changes: dict[str, Any], source: str = "arena preset") -> Config:
    """The configuration with some settings or tuned constants replaced (an arena arm's preset,
    a benchmark's grid point)."""
    tuned = {k: v for k, v in changes.items() if k not in BY_KEY}
    values = {k: v for k, v in changes.items() if k in BY_KEY}
    return Config({**cfg.values, **values}, {**cfg.sources, **{k: source for k in values}}, cfg.path,
                  overrides.laid_over(cfg.tuning, tuned), {**cfg.experimental, **tuned})


def _toml_value(value: Any) -> str:
    return json.dumps(value)  # JSON scalars and lists of strings are valid TOML


def parse_assignment(text: str) -> tuple[str, Any]:
    """A command line's KEY=VALUE: the value read as TOML (a string may go unquoted) and checked
    as the config file's would be."""
    key, sep, raw = (part.strip() for part in text.partition("="))
    setting = BY_KEY.get(key)
    if sep and setting is None and key in overrides.KEYS:
        value = _toml_or_text(raw)
        bad = overrides.problem(key, value)
        if bad:
            raise ConfigError(f"--set {key} = {json.dumps(value, default=str)} {bad}")
        return key, overrides.coerced(key, value)
    if not sep or setting is None:
        raise ConfigError(f"--set {text!r}: expected KEY=VALUE naming a setting or a tuned constant",
                          hint="`strata config show` lists every setting; config/tuning.py every constant")
    if setting.value_type is dict:
        raise ConfigError(f"--set {key}: a table is set in strata.toml, not on the command line")
    return key, _coerce(setting, _toml_or_text(raw), "--set")


def _toml_or_text(raw: str) -> Any:
    """A command line's value read as TOML; a bare string needs no quotes."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def settings_toml(values: dict[str, Any]) -> str:
    """A strata.toml holding exactly these settings and tuned constants (scalars and lists)."""
    lines, section = [], None
    for s in SETTINGS:
        if s.key in values:
            if s.section != section:
                section = s.section
                lines.append(f"[{section}]")
            lines.append(f"{s.name} = {_toml_value(values[s.key])}")
    tuned = [k for k in values if k not in BY_KEY]
    if tuned:
        lines.append(f"[{overrides.SECTION}]")
        lines += [f"{json.dumps(k)} = {_toml_value(values[k])}" for k in tuned]
    return "\n".join(lines) + "\n"


def render_default_toml() -> str:
    """A strata.toml with every setting commented out at its default, each as a whole
    `section.name = value` line and no table header: uncommenting a line changes that setting,
    and a table added at the end ([http], [loop.steps.NAME]) is the file's only one of its name."""
    lines = ["# strata configuration. Every setting is shown at its default, commented out.",
             "# Uncomment a line to change it; `strata config show` prints the effective values.",
             "# Tables of your own ([http], [loop.steps.NAME], [dossier.topics.NAME]) go at the end of the",
             "# file: every line below a [table] line belongs to that table."]
    section = None
    for s in SETTINGS:
        if s.section != section:
            section = s.section
            lines += ["", f"# --- {section} ---"]
        lines.append(f"# {s.doc}")
        lines.append(f"# {s.key} =" if s.default is None else f"# {s.key} = {_toml_value(s.default)}")
    return "\n".join(lines) + "\n"
