"""The rules the code's layout keeps, read from the source (AST, nothing imported), so that
tests/test_architecture.py can check them on strata and show each one failing on a package
built to break it.

A package is a folder of modules; its floors (FLOORS) say which package may import which: a
module imports only packages on its own floor or below, and never in a cycle."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

# strata_daemon's packages by floor, lowest first. `errors` is the one root module besides the
# package's own __init__/__main__: the public error types every floor raises.
FLOORS = (
    ("base", "errors"),
    ("config",),
    ("store",),
    ("scoring", "embedding"),
    ("episodes", "facts", "graph"),
    ("dossier", "capsule", "consolidation", "arena", "forgetting", "recall", "context"),
    ("app",),
    ("faces", "__main__"),
)
# What a face may import of strata: the facade and the application around it, and the public
# types below it (errors, settings, the base helpers); never a layer, the store or recall.
FACE_MAY_IMPORT = ("", "errors", "app", "config", "base", "faces")
# What the benchmark harness may import of strata_daemon: its public API.
BENCH_MAY_IMPORT = ("", "errors", "app", "config", "base", "faces")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
SQL = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|WITH|PRAGMA|BEGIN|COMMIT|ROLLBACK|REPLACE|"
                 r"VACUUM|ATTACH|DETACH|SAVEPOINT|RELEASE|ANALYZE|REINDEX|EXPLAIN)\s")


@dataclass
class Module:
    name: str  # dotted, e.g. strata_daemon.store.db
    path: Path
    is_package: bool
    tree: ast.Module
    lines: int
    imports: list[tuple[str, int]] = field(default_factory=list)  # (module or package imported, line)


def load(root: Path, package: str) -> dict[str, Module]:
    """Every module of `package` under `root` (the folder holding the package), with the modules
    of the same package each one imports (however deep in the module the import is)."""
    mods: dict[str, Module] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        text = path.read_text(encoding="utf-8")
        mods[name] = Module(name, path, is_package, ast.parse(text), len(text.splitlines()))
    for mod in mods.values():
        for node in ast.walk(mod.tree):  # `if TYPE_CHECKING:` imports too: a cycle of types is one a reader follows
            for target in _targets(mod, node):
                mod.imports.append((target, node.lineno))
    return mods


def _targets(mod: Module, node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = mod.name.split(".")[: len(mod.name.split(".")) - (node.level - (1 if mod.is_package else 0))]
        base_name = ".".join(base + ([node.module] if node.module else []))
    else:
        base_name = node.module or ""
    # `from pkg import sub` imports the module pkg.sub; `from mod import name` the module mod
    # (resolve() walks up from mod.name to it).
    return [f"{base_name}.{a.name}" for a in node.names]


def resolve(mods: dict[str, Module], name: str) -> str | None:
    """The module of the package that an imported name lands in (None: outside the package)."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def module_graph(mods: dict[str, Module]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod in mods.values():
        for target, _ in mod.imports:
            found = resolve(mods, target)
            # The package's own __init__ is where every import starts: an edge to it would make
            # every module a neighbour of every other. A package __init__ of a subpackage counts.
            if found and found != mod.name and "." in found:
                graph[mod.name].add(found)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def top(name: str) -> str:
    """The package's first-level part a module belongs to: strata_daemon.store.db -> store; a root
    module is its own part (errors); the package itself is ''."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def package_graph(mods: dict[str, Module]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for source, targets in module_graph(mods).items():
        graph.setdefault(top(source), set()).update(t for t in map(top, targets) if t != top(source))
    return graph


def floor_of(part: str, floors=FLOORS) -> int | None:
    return next((i for i, names in enumerate(floors) if part in names), None)


def floor_breaches(mods: dict[str, Module], floors=FLOORS) -> list[str]:
    """Imports of a package on a higher floor than the importer's, and packages no floor names."""
    out = []
    for mod in mods.values():
        here = floor_of(top(mod.name), floors)
        if top(mod.name) and here is None:
            out.append(f"{mod.name}: its package {top(mod.name)!r} is on no floor")
            continue
        for target, line in mod.imports:
            found = resolve(mods, target)
            there = floor_of(top(found), floors) if found else None
            if here is not None and there is not None and there > here:
                out.append(f"{mod.name}:{line} imports {found} (floor {there} above {here})")
    return list(dict.fromkeys(out))


def imports_outside(mods: dict[str, Module], within: str, allowed: tuple[str, ...]) -> list[str]:
    """Imports by the modules of the first-level part `within` of parts other than `allowed`."""
    return list(dict.fromkeys(f"{mod.name}:{line} imports {found}"
                              for mod in mods.values() if top(mod.name) == within
                              for target, line in mod.imports
                              if (found := resolve(mods, target)) and top(found) not in allowed))


def foreign_imports(mods: dict[str, Module], package: str, allowed: tuple[str, ...]) -> list[str]:
    """Imports of `package`'s parts other than `allowed`, by modules of another package (the
    benchmark harness reaching into the product)."""
    out = []
    for mod in mods.values():
        for target, line in mod.imports:
            if target == package or target.startswith(package + "."):
                part = target.split(".")[1] if "." in target else ""
                if part not in allowed:
                    out.append(f"{mod.name}:{line} imports {target}")
    return sorted(set(out))


def attribute_uses(mods: dict[str, Module], within: str, names: tuple[str, ...]) -> list[str]:
    """`x.db`-like attribute reads in the part `within` (a face going around the facade)."""
    return [f"{mod.name}:{node.lineno} uses .{node.attr}"
            for mod in mods.values() if top(mod.name) == within
            for node in ast.walk(mod.tree) if isinstance(node, ast.Attribute) and node.attr in names]


def facade_reads(mods: dict[str, Module], within: str, allowed: set[str],
                 holders: tuple[str, ...] = ("mem", "memory", "target", "view")) -> list[str]:
    """Names read off a Memory in the part `within` that the facade does not offer (`allowed`):
    a face or the harness reaching a layer's service, the store or the models through it. A
    Memory is what a variable named in `holders` holds, or `self.memory`."""
    def holds(node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id in holders or (
            isinstance(node, ast.Attribute) and node.attr in ("memory", "mem")
            and isinstance(node.value, ast.Name) and node.value.id == "self")

    return [f"{mod.name}:{node.lineno} reads .{node.attr}"
            for mod in mods.values() if top(mod.name) == within or not within
            for node in ast.walk(mod.tree)
            if isinstance(node, ast.Attribute) and holds(node.value) and node.attr not in allowed]


def sql_outside(mods: dict[str, Module], home: str = "store") -> list[str]:
    """String literals that are SQL statements, in modules outside the part `home`."""
    out = []
    for mod in mods.values():
        if top(mod.name) == home:
            continue
        for node in ast.walk(mod.tree):
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else (
                node.values[0].value if isinstance(node, ast.JoinedStr) and node.values
                and isinstance(node.values[0], ast.Constant) else None)
            if isinstance(text, str) and SQL.match(text):
                out.append(f"{mod.name}:{node.lineno}: {text.strip()[:60]!r}")
    return out


def too_long(mods: dict[str, Module], *, module_lines: int = MAX_MODULE_LINES,
             function_lines: int = MAX_FUNCTION_LINES, skip_functions_in: tuple[str, ...] = ()) -> list[str]:
    out = [f"{m.name}: {m.lines} lines" for m in mods.values() if m.lines > module_lines]
    for mod in mods.values():
        if any(mod.name.startswith(p) for p in skip_functions_in):
            continue
        for node in ast.walk(mod.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > function_lines:
                    out.append(f"{mod.name}:{node.lineno} {node.name}: {length} lines")
    return out


def busy_package_inits(mods: dict[str, Module], package: str) -> list[str]:
    """Package __init__ modules below the top that import anything of the package outside
    themselves: importing `pkg.sub.x` runs `pkg.sub/__init__`, so such an import makes cycles no
    module shows. (Gathering the package's own names, as scoring/ does, is fine.)"""
    return [f"{m.name}:{line} imports {t}" for m in mods.values() if m.is_package and m.name != package
            for t, line in m.imports if (t == package or t.startswith(package + "."))
            and not t.startswith(m.name + ".")]
