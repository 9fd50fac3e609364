"""The commands a coding agent's hooks run on every tool call or session start (cli/fast.py)
import neither the typer app nor git, the service, the TUI or the database stack: the
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
        json.dump(sorted({m.split(".")[0] for m in sys.modules}), f)
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
    modules = set(json.loads(dump.read_text()))
    assert "cli" in modules, "the probe did not run the self command"
    loaded = sorted(modules & HEAVY)
    assert not loaded, f"`self {' '.join(args)}` imports {loaded}"


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
    assert "typer" in json.loads(dump.read_text())
