"""The layout's rules (tests/architecture.py), checked on strata's source, and each shown to fail
on a package written to break it."""

from __future__ import annotations

import textwrap

import pytest

import architecture as arch
from conftest import REPO

SOURCE = REPO / "daemon"
PRODUCT = arch.load(SOURCE, "strata_daemon")
BENCH = arch.load(SOURCE, "strata_bench")


def test_no_import_cycle_between_modules():
    assert arch.cycles(arch.module_graph(PRODUCT)) == []
    assert arch.cycles(arch.module_graph(BENCH)) == []


def test_no_import_cycle_between_packages():
    assert arch.cycles(arch.package_graph(PRODUCT)) == []


def test_each_package_imports_only_its_floor_and_below():
    # base < config < store < scoring, embedding < episodes, facts, graph < dossier, capsule,
    # consolidation, arena, forgetting, recall < app < faces: no layer imports a face.
    assert arch.floor_breaches(PRODUCT) == []


def test_only_the_store_writes_sql():
    # The benchmark harness writes SQL of its own: its baselines (bare FTS5, a bare table) are
    # SQLite without strata, and it fills fixtures of a million rows straight into the tables.
    assert arch.sql_outside(PRODUCT) == []


def facade() -> set[str]:
    """What a face may read off a Memory: its public methods and the values it is opened with,
    not its store (`db`), its services (`layers`) or its loaded models."""
    from strata_daemon.app.memory import Memory

    return {n for n in dir(Memory) if not n.startswith("_")} | {"home", "agent", "actor", "config", "limits"}


def test_faces_go_through_the_facade():
    assert arch.imports_outside(PRODUCT, "faces", arch.FACE_MAY_IMPORT) == []
    assert arch.attribute_uses(PRODUCT, "faces", ("db", "layers")) == []
    assert arch.facade_reads(PRODUCT, "faces", facade()) == []


def test_the_facade_offers_no_service_of_a_layer():
    from strata_daemon.app.memory import Memory

    assert not {"db", "layers", "models"} & facade()
    assert not any(hasattr(Memory, n) for n in ("facts", "web", "dossiers", "capsule", "consolidation", "arena",
                                                "forgetting"))


# The harness's modules that hold a Memory's database: fixtures of a million rows written
# straight into the tables (facts' history, edges), baselines built in the same file (bare
# FTS5 over strata's index, a bare key-value table, a flat edge table, a flat vector matrix, a
# bare delete) and a home aged by hand (memories moved to the cold tier, the recalls a capsule
# reads). Each is SQLite without strata, for comparison; none is a way a user reaches a home.
BENCH_BASELINES = ("capsule", "consolidate", "facts", "locomo_baselines", "purge", "recall", "scale", "web")


def test_the_benchmark_harness_uses_only_the_public_api():
    assert arch.foreign_imports(BENCH, "strata_daemon", arch.BENCH_MAY_IMPORT) == []
    outside = {n: m for n, m in BENCH.items() if n.removeprefix("strata_bench.") not in BENCH_BASELINES}
    assert arch.facade_reads(outside, "", facade() | {"models"}, holders=("mem", "memory")) == []
    baselines = {n: m for n, m in BENCH.items() if n.removeprefix("strata_bench.") in BENCH_BASELINES}
    assert arch.facade_reads(baselines, "", facade() | {"models", "db"}, holders=("mem", "memory")) == []


def test_modules_and_functions_stay_short():
    # A migration's SQL is text, not logic: its module holds it as a constant, so no exception.
    assert arch.too_long(PRODUCT) == []
    assert arch.too_long(BENCH) == []


def test_package_inits_import_nothing_of_the_package():
    assert arch.busy_package_inits(PRODUCT, "strata_daemon") == []


def test_migrations_import_nothing_live():
    migrations = {n: m for n, m in PRODUCT.items() if n.startswith(("strata_daemon.store.migrations.",
                                                                      "strata_daemon.store.postgres.migrations."))}
    assert len(migrations) > 21
    for mod in migrations.values():
        live = [t for t, _ in mod.imports if t.startswith("strata_daemon")
                and not t.startswith("strata_daemon.store.migrations.script")]
        assert live == [], f"{mod.name} runs live code: {live}"


# -- each rule fails on a package built to break it ---------------------------------------------

BROKEN = {
    "__init__.py": "",
    "base/__init__.py": "",
    "base/x.py": "",
    "store/__init__.py": "from pkg.base import x\n",  # an __init__ that imports outside itself
    "store/db.py": "from pkg.layer import a\n\nQUERY = 'SELECT 1'\n",  # the store imports a layer
    "layer/__init__.py": "",
    "layer/a.py": "from pkg.layer import b\n\n\ndef rows(conn):\n    return conn.execute('SELECT id FROM t')\n",
    "layer/b.py": "from pkg.layer import a\nfrom pkg.store import db\n",  # a -> b -> store.db -> a
    "faces/__init__.py": "",
    "faces/cli.py": "from pkg.store import db\n\n\ndef show(mem):\n    return mem.db, mem.layers.facts.set(1)\n",
    "faces/long.py": "def long():\n" + "    x = 1\n" * 80 + "    return x\n" + "\n" * 319,  # 401 lines
    "bench.py": "",
}
FLOORS = (("base",), ("store",), ("layer",), ("faces",))


@pytest.fixture(scope="module")
def broken(tmp_path_factory) -> dict[str, arch.Module]:
    root = tmp_path_factory.mktemp("broken")
    for name, text in BROKEN.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return arch.load(root, "pkg")


def test_an_import_only_type_checkers_read_is_an_edge_too(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "__init__.py").write_text("")
    (tmp_path / "p" / "a.py").write_text("from p import b\n")
    (tmp_path / "p" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p import a\n")
    assert arch.cycles(arch.module_graph(arch.load(tmp_path, "p"))) == [["p.a", "p.b"]]


def test_a_module_cycle_is_found(broken):
    assert arch.cycles(arch.module_graph(broken)) == [["pkg.layer.a", "pkg.layer.b", "pkg.store.db"]]


def test_a_package_cycle_is_found(broken):
    assert ["layer", "store"] in arch.cycles(arch.package_graph(broken))


def test_a_floor_breach_and_a_package_on_no_floor_are_found(broken):
    found = arch.floor_breaches(broken, FLOORS)
    assert any(f.startswith("pkg.store.db:1 imports pkg.layer.a") for f in found)
    assert "pkg.bench: its package 'bench' is on no floor" in found


def test_sql_outside_the_store_is_found(broken):
    found = arch.sql_outside(broken)
    assert len(found) == 1 and found[0].startswith("pkg.layer.a:5")


def test_a_face_past_the_facade_is_found(broken):
    assert arch.imports_outside(broken, "faces", ("", "base")) == ["pkg.faces.cli:1 imports pkg.store.db"]
    assert arch.attribute_uses(broken, "faces", ("db",)) == ["pkg.faces.cli:5 uses .db"]
    assert arch.facade_reads(broken, "faces", {"recall"}) == ["pkg.faces.cli:5 reads .db", "pkg.faces.cli:5 reads .layers"]


def test_a_reach_into_another_package_is_found(broken):
    found = arch.foreign_imports(broken, "pkg", ("", "base"))
    assert "pkg.store.db:1 imports pkg.layer.a" in found


def test_a_long_module_and_a_long_function_are_found(broken):
    assert arch.too_long(broken) == ["pkg.faces.long: 401 lines", "pkg.faces.long:1 long: 82 lines"]


def test_a_busy_package_init_is_found(broken):
    assert arch.busy_package_inits(broken, "pkg") == ["pkg.store:1 imports pkg.base.x"]
