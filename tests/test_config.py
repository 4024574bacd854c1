import json
import re

import pytest

from conftest import write_config
from strata_daemon.app import wiring
from strata_daemon.config.home import Home, init_home, resolve_home, shipped
from strata_daemon.config.load import load_config, parse_assignment, render_default_toml, settings_toml
from strata_daemon.config.settings import SETTINGS
from strata_daemon.errors import ConfigError


def test_defaults_without_file(tmp_path):
    cfg = load_config(tmp_path / "absent.toml")
    assert all(cfg.sources[s.key] == "default" for s in SETTINGS)
    assert cfg["store.max_content_bytes"] == 65536


def test_file_overrides_and_records_source(home):
    write_config(home, '[store]\nmax_content_bytes = 1000\n[scoring]\npreset = "long-term"\n'
                       '[experimental]\n"scoring.weights.relevance" = 0.9\n')
    cfg = load_config(home / "strata.toml")
    assert cfg["store.max_content_bytes"] == 1000
    assert cfg.sources["store.max_content_bytes"].endswith("strata.toml")
    assert cfg.sources["recall.k"] == "default"
    params = wiring.scoring_params(cfg)
    assert params.half_life_hours == 720.0 and params.weights.relevance == 0.9
    assert cfg.experimental == {"scoring.weights.relevance": 0.9} and cfg.tuning.scoring.weights.recency == 0.1


def test_a_tuned_constant_is_no_setting_and_experimental_takes_it_by_name(home):
    write_config(home, '[recall]\nvector_weight = 0.9\n')
    with pytest.raises(ConfigError) as info:
        load_config(home / "strata.toml")
    assert "recall.vector_weight is a tuned constant now" in info.value.hint and "[experimental]" in info.value.hint
    write_config(home, '[experimental.recall]\nvector_weight = 1\n')  # a table, and an int for a float
    cfg = load_config(home / "strata.toml")
    assert cfg.tuning.recall.vector_weight == 1.0 and isinstance(cfg.tuning.recall.vector_weight, float)
    assert cfg.rows()[-1]["key"] == "experimental.recall.vector_weight"


def test_config_show_lists_what_experimental_changes(home, cli):
    write_config(home, '[experimental]\n"recall.rerank_weight" = 0\n')
    shown = cli("config", "show", check=True).out
    assert re.search(r"^experimental\.recall\.rerank_weight +0\.0 .*\(experimental\)$", shown, re.M), shown
    rows = cli.json("config", "show")["settings"]
    assert rows[-1] == {**rows[-1], "key": "experimental.recall.rerank_weight", "value": 0.0, "default": 0.25}
    # Every tuned constant, by the name messages use, with its value here and its default.
    every = cli.json("config", "show", "--experimental")["constants"]
    by_key = {r["key"]: r for r in every}
    assert len(every) > 100 and by_key["arena.min_episodes"] == {
        "key": "arena.min_episodes", "value": 20, "default": 20, "source": "default"}
    assert by_key["recall.rerank_weight"]["value"] == 0.0 and by_key["recall.rerank_weight"]["source"].endswith(
        "strata.toml")
    text = cli("config", "show", "--experimental", "facts", check=True, env={"COLUMNS": "80"}).out
    assert re.search(r"^facts\.conflict_window_seconds +\S+ +default$", text, re.M), text
    refused = cli("config", "show", "--experimental", "arena.min_episode")
    assert refused.returncode == 4 and "did you mean arena.min_episodes" in refused.err
    for text, said in (('[experimental]\n"recall.candidates" = 2.5\n', "must be a whole number"),
                       ('[experimental]\n"recall.nothing" = 1\n', "no tuned constant"),
                       ('[experimental]\n"recall.rerank_wieght" = 1\n', "did you mean recall.rerank_weight")):
        write_config(home, text)
        with pytest.raises(ConfigError, match=said):
            load_config(home / "strata.toml")


@pytest.mark.parametrize("text, key", [
    ("[store]\nmax_content_bytes = -5\n", "store.max_content_bytes"),
    ("[store]\nmax_content_bytes = \"big\"\n", "store.max_content_bytes"),
    ("[recall]\nmode = \"psychic\"\n", "recall.mode"),
    ("[scoring]\npreset = \"yolo\"\n", "scoring.preset"),
    ("[scoring]\ntime_weight = 1.5\n", "scoring.time_weight"),
    ("[store]\nmax_contnt_bytes = 5\n", "store.max_contnt_bytes"),
    ("[agent]\nnamespace = \"has space\"\n", "agent.namespace"),
    ("[store]\ndefault_importance = true\n", "store.default_importance"),
])
def test_bad_value_names_the_key(home, text, key):
    write_config(home, text)
    with pytest.raises(ConfigError) as info:
        load_config(home / "strata.toml")
    assert key in info.value.message


def test_a_bad_value_s_hint_says_what_to_write(home):
    write_config(home, '[store]\nmax_content_bytes = "big"\n')
    with pytest.raises(ConfigError) as info:
        load_config(home / "strata.toml")
    hint = info.value.hint
    assert hint.startswith("give store.max_content_bytes 65536 (the default) or another value"), hint
    assert "delete that line" in hint


def test_broken_toml_is_reported(home):
    write_config(home, "[store\nmax = 1")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(home / "strata.toml")


@pytest.mark.parametrize("text", ["x" + ".x" * 1000 + " = 1\n", "[" + "t." * 1000 + "t]\n",
                                  "[recall]\n" + "a." * 8 + "b = 1\n"])
def test_a_key_nested_past_eight_levels_is_named_as_such(home, text):
    write_config(home, text)  # 1,000 levels raised RecursionError from every command
    with pytest.raises(ConfigError, match="nested more than 8 levels deep") as info:
        load_config(home / "strata.toml")
    assert len(info.value.message) < 200 + len(str(home))


def test_all_zero_weights_rejected(home):
    write_config(home, "[scoring.weights]\n" + "".join(
        f"{w} = 0\n" for w in ("relevance", "recency", "strength", "priority", "wilson", "context")))
    with pytest.raises(ConfigError, match="weights"):
        load_config(home / "strata.toml")


def test_rendered_default_toml_parses_to_defaults(tmp_path):
    text = render_default_toml()
    uncommented = "\n".join(line[2:] if line.startswith("# ") and " = " in line else line
                            for line in text.splitlines())
    path = tmp_path / "s.toml"
    path.write_text(uncommented)
    cfg = load_config(path)
    for s in SETTINGS:
        if s.default is not None:
            assert cfg[s.key] == s.default, s.key


def test_the_file_init_writes_takes_lines_uncommented_and_tables_appended(tmp_path):
    home, _ = init_home(tmp_path / "h")
    path = home.config_path
    text = path.read_text(encoding="utf-8")
    assert "\n[" not in text  # no table header of its own for an appended one to clash with
    uncommented = text.replace("# recall.k = 10\n", "recall.k = 3\n").replace(
        "# scoring.preset = \"balanced\"\n", "scoring.preset = \"long-term\"\n")
    assert uncommented.count("\nrecall.k = 3\n") == 1 and "\nscoring.preset = \"long-term\"\n" in uncommented
    path.write_text(uncommented + '\n[http]\nport = 8765\n\n[loop.steps.uptime]\ncommand = "uptime"\n',
                    encoding="utf-8")
    cfg = load_config(path)
    assert cfg["http.port"] == 8765 and cfg.sources["http.port"] == str(path)
    assert cfg["recall.k"] == 3 and cfg["scoring.preset"] == "long-term"
    assert cfg["loop.steps"] == {"uptime": {"command": "uptime"}}
    assert cfg["http.enabled"] is True and cfg.sources["http.enabled"] == "default"


@pytest.mark.parametrize("edit, said", [
    (lambda t: t.replace("# http.enabled = true", "http.enabled = false") + "\n[http]\nport = 8765\n",
     "[http] is given twice"),
    (lambda t: t + "\n[http]\nport = 8765\nrecall.k = 3\n", "sits below the table [http]"),
    (lambda t: "k = 3\n" + t, "recall.k = ..."),
], ids=["a line and a table of one section", "a line below a table", "a name without its section"])
def test_a_misplaced_line_in_the_file_init_writes_is_explained(tmp_path, edit, said):
    home, _ = init_home(tmp_path / "h")
    home.config_path.write_text(edit(home.config_path.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(home.config_path)
    assert said in info.value.hint, info.value.hint


def test_home_resolution_order(tmp_path, monkeypatch):
    monkeypatch.setenv("STRATA_HOME", str(tmp_path / "env"))
    assert resolve_home(tmp_path / "flag").root == (tmp_path / "flag").resolve()
    assert resolve_home().root == (tmp_path / "env").resolve()
    monkeypatch.delenv("STRATA_HOME")
    # Never the install checkout: the per-user data folder, which may be made on first use.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert resolve_home() == Home((tmp_path / "data" / "strata").resolve())
    assert not resolve_home().named
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", "")
    with pytest.raises(ConfigError, match="no home folder"):
        resolve_home()


def test_init_copies_the_pristine_capsule(tmp_path):
    home, _ = init_home(tmp_path / "h")
    assert (home.capsule_dir / "CAPSULE.md").read_bytes() == shipped("capsule", "CAPSULE.md").read_bytes()
    assert "strata:begin facts" in (home.capsule_dir / "CAPSULE.md").read_text()


def test_init_is_idempotent_and_private(tmp_path):
    home, wrote = init_home(tmp_path / "h")
    assert wrote and (home.config_path.stat().st_mode & 0o777) == 0o600
    home.config_path.write_text("[recall]\nk = 3\n")
    _, wrote_again = init_home(tmp_path / "h")
    assert not wrote_again and "k = 3" in home.config_path.read_text()


def test_a_command_line_setting_is_read_as_toml_and_checked(tmp_path):
    assert parse_assignment("recall.k=7") == ("recall.k", 7)
    assert parse_assignment(" recall.overlap_embedding = true ") == ("recall.overlap_embedding", True)
    assert parse_assignment("recall.mode=deep") == ("recall.mode", "deep")  # a bare string needs no quotes
    assert parse_assignment('recall.mode="fast"') == ("recall.mode", "fast")
    assert parse_assignment("recall.vector_weight=1") == ("recall.vector_weight", 1.0)
    assert parse_assignment('store.kinds=["note", "fact"]') == ("store.kinds", ["note", "fact"])
    for bad in ("recall.k", "recall.nope=1", "recall.k=0", "recall.mode=psychic", "facts.rules=1",
                "recall.candidates=many"):
        with pytest.raises(ConfigError):
            parse_assignment(bad)
    values = dict(parse_assignment(a) for a in ("recall.k=7", "store.kinds=[\"note\", \"fact\"]",
                                                "store.default_kind=note", "recall.overlap_embedding=true"))
    path = tmp_path / "strata.toml"
    path.write_text(settings_toml(values), encoding="utf-8")
    cfg = load_config(path)
    assert {k: cfg[k] for k in values if k in cfg.values} == {k: v for k, v in values.items()
                                                               if k != "recall.overlap_embedding"}
    assert cfg.experimental == {"recall.overlap_embedding": True}  # a tuned constant, under [experimental]
    assert all(cfg.sources[k] == "default" for k in cfg.values if k not in values)


def test_config_show_lists_the_settings_while_the_file_is_broken(home, cli):
    write_config(home, "recal.k = 3\n")  # the hint points to `config show`: it must answer
    shown = cli("config", "show", "recall.k")
    assert shown.returncode == 7 and "unknown setting 'recal.k'" in shown.err and "did you mean recall.k" in shown.err
    assert re.search(r"^recall\.k +10 +default$", shown.out, re.M) and "defaults, not the file's" in shown.err
    got = json.loads(cli("config", "show", "--json", "recall.k").out)
    assert got["config_error"]["error"] == "config" and got["settings"][0]["value"] == 10
