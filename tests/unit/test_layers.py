"""The tree's layers, held by its imports: every import (at the top of a module, inside a
function, or for type checking only) points down the table below or stays in its own part, and
no module or part imports itself around a circle.

ARCHITECTURE.md draws the same table. The pure core's finer rule (no filesystem, no adapter
library) is `test_core_is_pure.py`'s; what the CLI may import is `test_cli_layers.py`'s.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# (part, rank): a module may import its own part and every part of a lower rank.
PARTS: list[tuple[str, int]] = [
    ("service", 0),  # the package itself: its version
    ("service.core", 0),  # the pure model
    ("service.adapters.store", 10),
    ("service.adapters.checkout", 10),
    ("service.adapters.sync", 11),
    ("service.adapters.importers", 11),
    ("service.adapters.data", 11),
    ("service.adapters.auth", 12),
    ("service.adapters.index", 12),
    ("service.adapters.cluster", 12),
    ("service.app", 20),  # the application layer: commands, queries, ports, the wiring
    ("service.server.live", 30),  # the team service: its live workspaces, then its front ends
    ("service.server.endpoint", 31),
    ("service.server.mirror", 31),
    ("service.server.api", 32),
    ("service.server.web", 33),
    ("service.server", 34),  # the composition root and the process that runs it
    ("cli", 40),
]


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in [*ROOT.glob("service/**/*.py"), *ROOT.glob("cli/**/*.py")]:
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


MODULES = modules()


def part_of(module: str) -> tuple[str, int]:
    """The longest part of the table `module` lies in."""
    best = max((p for p in PARTS if module == p[0] or module.startswith(p[0] + ".")), key=lambda p: len(p[0]))
    return best


def owner(target: str) -> str | None:
    """The project module an import of `target` loads (a name imported from a module is that
    module), None outside the project."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def imports(module: str) -> Iterator[tuple[str, int]]:
    """Every project module `module` imports, anywhere in its text, with the line."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            targets = [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for target in targets:
            found = owner(target)
            if found is not None and found != module:
                yield found, node.lineno


GRAPH = {module: sorted({t for t, _ in imports(module)}) for module in MODULES}


def circles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected parts of `graph` with more than one node (Tarjan's)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_module_lies_in_a_part_of_the_table() -> None:
    loose = [m for m in MODULES if not any(m == p or m.startswith(p + ".") for p, _ in PARTS)]
    assert not loose, loose


def points_up(module: str, target: str) -> bool:
    """Whether `module` importing `target` leaves its part for one of its rank or above."""
    (here, rank), (there, level) = part_of(module), part_of(target)
    return there != here and level >= rank


def test_every_import_points_down_the_table_or_stays_in_its_part() -> None:
    upward = [
        f"{MODULES[module].relative_to(ROOT)}:{line}: {module} imports {target}"
        for module in sorted(MODULES)
        for target, line in imports(module)
        if points_up(module, target)
    ]
    assert not upward, "\n".join(upward)


def test_no_module_imports_itself_around_a_circle() -> None:
    assert circles(GRAPH) == []


def test_no_part_imports_itself_around_a_circle() -> None:
    parts: dict[str, set[str]] = defaultdict(set)
    for module, targets in GRAPH.items():
        parts[part_of(module)[0]] |= {part_of(t)[0] for t in targets} - {part_of(module)[0]}
    assert circles({p: sorted(t) for p, t in parts.items()}) == []


def test_the_circle_finder_finds_a_circle() -> None:
    """The check above can fail: a circle through three modules is found, a chain is not."""
    assert circles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
    assert circles({"a": ["b"], "b": ["c"], "c": []}) == []


def test_an_upward_import_is_found() -> None:
    """The check above can fail: the core importing the CLI, the application layer the
    service, the store the sync adapter point up; the reverse, and a part's own modules, not."""
    assert points_up("service.core.events.ids", "cli.main")
    assert points_up("service.app.queries", "service.server.live.view")
    assert points_up("service.adapters.store.store", "service.adapters.sync.engine")
    assert not points_up("cli.main", "service.app.queries")
    assert not points_up("service.server.api.routes", "service.server.live.view")
    assert not points_up("service.server.api.routes", "service.server.api.guard")
