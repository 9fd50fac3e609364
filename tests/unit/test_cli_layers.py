"""The CLI writes only through the application layer, and reaches past it into no module it
does not reach today (a ratchet: the reads are to move behind `service.app`, then `cli/` is
to import only `service.app` and the errors)."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "cli"
WRITES = {"write", "write_entity", "write_record", "write_project"}  # Workspace's, under execute
TARGET = {"service.app", "service.model.errors", "service.model.problems", "service.model.requests"}
STILL_REACHED = {  # what the CLI still imports past service.app: `self --version` (cli/main.py)
    "service.__version__",
}


def _trees() -> dict[str, ast.AST]:
    return {p.name: ast.parse(p.read_text()) for p in sorted(CLI.glob("*.py"))}


def _imported(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("service"):
            short = node.module in ("service", "service.model")
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


def test_the_cli_reaches_past_the_application_layer_no_further_than_today() -> None:
    imported = {m for tree in _trees().values() for m in _imported(tree) if not m.startswith("service.app.")}
    assert imported - TARGET <= STILL_REACHED, sorted(imported - TARGET - STILL_REACHED)
