"""The commands a coding agent's hooks run on every tool call or session start (cli/fast.py)
import neither the typer app nor git, the service, the TUI or the database stack, nor
typing_extensions (msgspec is imported without it, and decodes the same); the gate on a
warm policy cache folds nothing, and a session start imports none of the installers: the
installed `self` script is run as a process and its modules are listed at exit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.selfrun import PROJECT, SELF, TIMEOUT, base_env, describe, run_process

HEAVY = {
    "typer",
    "click",
    "dulwich",
    "litestar",
    "uvicorn",
    "sqlite_utils",
    "structlog",
    "rich",
    "httpx",
    "jinja2",
    "prometheus_client",
}

# Runs the installed `self` script itself, then writes every imported top-level module name.
PROBE = """
import atexit, json, runpy, sys
out, script, args = sys.argv[1], sys.argv[2], sys.argv[3:]
def dump():
    with open(out, "w") as f:
        json.dump(sorted(sys.modules), f)
atexit.register(dump)
sys.argv = [script, *args]
runpy.run_path(script, run_name="__main__")
"""

HOOK = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A store with project `app` and a policy decision, selected through the environment."""
    root = tmp_path_factory.mktemp("fast") / "store"
    env = base_env() | {"SELF_WORKSPACE": str(root), "SELF_PROJECT": PROJECT}
    for args in (
        ("init", str(root)),
        ("project", "add", PROJECT),
        ("goal", "answer hooks fast"),
        ("decide", "never force-push", "--gate", "deny", "--tool", "Bash", "--pattern", "git push*--force*"),
    ):
        made = run_process(args, env)
        assert made.returncode == 0, describe(made)
    return env


@pytest.mark.parametrize(
    ("args", "shows"),
    [
        (("--version",), "self "),
        (("gate",), '"decision":"allow"'),
        (("agent", "context"), "answer hooks fast"),
        (("context", "--plain"), "answer hooks fast"),
        (("context", "--json"), "answer hooks fast"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else "",
)
def test_a_hot_command_imports_no_heavy_module(
    env: dict[str, str], tmp_path: Path, args: tuple[str, ...], shows: str
) -> None:
    modules = {m.split(".")[0] for m in loaded_by(args, env, tmp_path, shows)}
    assert "cli" in modules, "the probe did not run the self command"
    loaded = sorted(modules & HEAVY)
    assert not loaded, f"`self {' '.join(args)}` imports {loaded}"


# Modules a hot command does without, beyond HEAVY (each a whole module name).
LEAN = [
    (("gate",), {"typing_extensions", "service.core.fold.fold", "service.core.ledger.derived"}),
    (("agent", "context"), {"typing_extensions", "service.app.installers", "service.app.agents"}),
    (("context", "--plain"), {"typing_extensions"}),
    (("context", "--json"), {"typing_extensions"}),
]


@pytest.mark.parametrize(("args", "without"), LEAN, ids=[" ".join(a) for a, _ in LEAN])
def test_a_hot_command_imports_only_what_it_uses(
    env: dict[str, str], tmp_path: Path, args: tuple[str, ...], without: set[str]
) -> None:
    loaded_by(args, env, tmp_path, "")  # the caches made (the gate's policies, the hot slices)
    loaded = sorted(set(loaded_by(args, env, tmp_path, "")) & without)
    assert not loaded, f"`self {' '.join(args)}` imports {loaded}"


def loaded_by(args: tuple[str, ...], env: dict[str, str], tmp_path: Path, shows: str) -> list[str]:
    """Every module `self ARGS` had imported at exit (`shows`: what its output must hold)."""
    dump = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(dump), SELF, *args],
        env=env,
        cwd=tmp_path,
        input=HOOK,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0 and shows in proc.stdout, describe(proc)
    modules: list[str] = json.loads(dump.read_text())
    return modules


def test_another_command_still_runs_through_the_typer_app(env: dict[str, str], tmp_path: Path) -> None:
    dump = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(dump), SELF, "status"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, describe(proc)
    assert "typer" in {m.split(".")[0] for m in json.loads(dump.read_text())}


# Decodes, validates and describes types whose hints msgspec reads through typing_extensions.
DECODES = """
import json, sys
from typing import Annotated, NotRequired, Required, TypedDict
if sys.argv[1] == "lean":
    from cli.fast import _import_msgspec
    _import_msgspec()
import msgspec

class Point(TypedDict, total=False):
    x: Required[int]
    y: NotRequired[Annotated[int, msgspec.Meta(ge=0)]]

class Shape(msgspec.Struct, frozen=True):
    name: Annotated[str, msgspec.Meta(min_length=1)]
    points: "list[Point]"
    tags: list[str] = []

found = []
for doc in ('{"name":"a","points":[{"x":1,"y":2},{"x":3}]}', '{"name":"","points":[]}',
            '{"name":"a","points":[{"y":1}]}', '{"name":"a","points":[{"x":1,"y":-1}]}'):
    try:
        found.append(repr(msgspec.json.decode(doc, type=Shape)))
    except msgspec.ValidationError as exc:
        found.append(str(exc))
found.append(json.dumps(msgspec.json.schema(Shape), sort_keys=True))
print(json.dumps({"found": found, "typing_extensions": "typing_extensions" in sys.modules}))
"""


def test_msgspec_imported_without_typing_extensions_reads_types_the_same(tmp_path: Path) -> None:
    def run(how: str) -> dict[str, object]:
        proc = subprocess.run(
            [sys.executable, "-c", DECODES, how],
            env=base_env(),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        assert proc.returncode == 0, describe(proc)
        found: dict[str, object] = json.loads(proc.stdout)
        return found

    lean, full = run("lean"), run("full")
    assert lean["found"] == full["found"]
    assert (lean["typing_extensions"], full["typing_extensions"]) == (False, True)
