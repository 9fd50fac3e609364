"""The CLI is a front end of the application layer: it writes only through `execute`, and it
imports of `service` only `service.app` (and its modules), the model's errors, problem table and
command values, and the version string."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "cli"
WRITES = {"write", "write_entity", "write_record", "write_project"}  # Workspace's, under execute
ALLOWED = {
    "service.__version__",  # `self --version`
    "service.app",
    "service.server.run",  # `self serve`: the HTTP front end, over the same application layer
    "service.core.errors",
    "service.core.problems",
    "service.core.commands.requests",
}


def _trees() -> dict[str, ast.AST]:
    return {p.name: ast.parse(p.read_text()) for p in sorted(CLI.glob("*.py"))}


def _imported(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("service"):
            short = (ROOT / node.module.replace(".", "/")).is_dir()  # `from a.package import module`
            found |= {f"{node.module}.{a.name}" for a in node.names} if short else {node.module}
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("service")}
    return found


def test_every_cli_write_goes_through_execute() -> None:
    direct = [
        f"{name}: {node.func.attr}"
        for name, tree in _trees().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WRITES
        if not ast.unparse(node.func.value).startswith(("sys.stdout", "sys.stderr"))  # output, not the store
    ]
    assert not direct, direct


def test_the_cli_imports_only_the_application_layer() -> None:
    imported = {
        f"{name}: {module}"
        for name, tree in _trees().items()
        for module in _imported(tree)
        if module not in ALLOWED and not module.startswith("service.app.")
    }
    assert not imported, sorted(imported)
