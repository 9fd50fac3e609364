"""`service/core` is the functional core: it imports no adapter and touches no filesystem.

Every module under service/core is parsed (not imported) and each import statement, at
any depth (including imports inside functions), is checked. Within the project the model
may import only `service.core`; outside it, none of the adapter, process, network or
filesystem modules below.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

MODEL = Path(__file__).resolve().parents[2] / "service" / "core"

FORBIDDEN = frozenset(
    {
        # adapters
        "dulwich",
        "sqlite3",
        "sqlite_utils",
        "litestar",
        "structlog",
        "typer",
        "cli",
        # the filesystem, processes, the network
        "os",
        "pathlib",
        "shutil",
        "io",
        "subprocess",
        "socket",
        "tempfile",
        "glob",
        "fcntl",
        "mmap",
        "multiprocessing",
        "urllib",
        "ssl",
        # imports the check could not see
        "importlib",
    }
)
FORBIDDEN_CALLS = frozenset({"open", "__import__", "exec", "eval"})


def module_name(path: Path) -> str:
    relative = path.relative_to(MODEL.parent.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def violations(source: str, module: str, is_package: bool = False) -> list[str]:
    """Each forbidden import or call in one module's source, as `line: what`."""
    tree = ast.parse(source)
    found: list[str] = []

    def check(name: str, line: int) -> None:
        root = name.split(".")[0]
        if root == "service":
            if name != "service.core" and not name.startswith("service.core."):
                found.append(f"{line}: imports {name} (the model imports only service.core)")
        elif root in FORBIDDEN:
            found.append(f"{line}: imports {name}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                check(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            target = resolve(node, module, is_package)
            names = tuple(alias.name for alias in node.names)
            if target == "service":  # `from service import x` / `from .. import x`
                for name in names:
                    check(f"service.{name}", node.lineno)
            else:
                check(target, node.lineno)
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS
        ):
            found.append(f"{node.lineno}: calls {node.func.id}()")
    return found


MODULES = sorted(MODEL.rglob("*.py"))


def test_the_model_package_is_where_this_test_looks() -> None:
    assert (MODEL / "fold" / "fold.py").is_file()
    assert len(MODULES) >= 10


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(MODEL)) for p in MODULES])
def test_model_module_imports_no_adapter_and_no_filesystem(path: Path) -> None:
    found = violations(path.read_text(), module_name(path), path.name == "__init__.py")
    assert not found, f"service/core/{path.relative_to(MODEL)} is not pure:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        "import os",
        "import os.path",
        "from pathlib import Path",
        "import dulwich.repo",
        "from sqlite_utils import Database",
        "import sqlite3",
        "from litestar import get",
        "import structlog",
        "import typer",
        "import shutil, subprocess",
        "import socket",
        "from io import open",
        "from io import StringIO",
        "import io\nf = io.FileIO('x')",
        "from service.adapters.store import log",
        "from service import sync",
        "from service.adapters.index.search import rebuild",
        "from service.server.api import app",
        "from cli import main",
        "from ..store import segments",
        "from .. import workspace",
        "def f():\n    import os\n",
        "data = open('x').read()",
        "mod = __import__('os')",
        "import importlib",
    ],
)
def test_the_check_catches_each_kind_of_violation(source: str) -> None:
    assert violations(source, "service.core.example")


@pytest.mark.parametrize(
    "source",
    [
        "import re, math, msgspec",
        "from collections.abc import Iterable",
        "from service.core.events.events import Event",
        "from . import ids",
        "from .fold import fold",
        "from service.core import state",
    ],
)
def test_the_check_allows_pure_imports(source: str) -> None:
    assert violations(source, "service.core.example") == []
