"""Running the real `self` executable as a subprocess against a store (used by conftest.py).

Nothing here imports the product to call it: every assertion the e2e tests make is about
what a `self` process printed, the exit code it returned, or the files it left in the store.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

VENV_BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]
PROJECT = "app"
TIMEOUT = 60


def self_executable() -> str:
    """The `self` console script next to this interpreter, else the one on PATH."""
    beside = VENV_BIN / "self"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("self")
    if found is None:
        pytest.fail("no `self` executable next to sys.executable or on PATH; pip install -e .")
    return found


SELF = self_executable()


def base_env() -> dict[str, str]:
    """The environment of every `self` process: no selection, identity or terminal leaks in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SELF_")}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["TERM"] = "dumb"
    env["NO_COLOR"] = "1"
    return env


def run_self(
    args: tuple[str, ...], env: dict[str, str], input: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SELF, *args],
        env=env,
        input=input,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def describe(proc: subprocess.CompletedProcess[str]) -> str:
    """A failure message naming the command and all it printed."""
    return (
        f"`self {' '.join(proc.args[1:])}` exited {proc.returncode}\n"
        f"--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}"
    )


class Store:
    """A workspace store in a temporary folder, and the way to run `self` against it."""

    def __init__(self, root: Path, project: str | None) -> None:
        self.root = root
        self.project = project
        self.cwd = root.parent

    def env(self, env_extra: dict[str, str | None] | None = None) -> dict[str, str]:
        """SELF_WORKSPACE, SELF_PROJECT when selected, then env_extra (None unsets a name)."""
        env: dict[str, str | None] = dict(base_env())
        env["SELF_WORKSPACE"] = str(self.root)
        if self.project:
            env["SELF_PROJECT"] = self.project
        env.update(env_extra or {})
        return {k: v for k, v in env.items() if v is not None}

    def run(
        self, *args: str, env_extra: dict[str, str | None] | None = None, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`self ARGS…` with SELF_WORKSPACE (and SELF_PROJECT when there is a project)."""
        return run_self(args, self.env(env_extra), input, cwd=self.cwd)

    def ok(self, *args: str, **kwargs: Any) -> str:
        """Run and require exit 0; the stdout."""
        proc = self.run(*args, **kwargs)
        assert proc.returncode == 0, describe(proc)
        return proc.stdout

    def json(self, *args: str, **kwargs: Any) -> Any:
        """Run with --json, require exit 0 and exactly one JSON document on stdout."""
        out = self.ok(*args, "--json", **kwargs)
        try:
            return json.loads(out)
        except json.JSONDecodeError as exc:
            raise AssertionError(
                f"`self {' '.join(args)} --json` printed no single JSON document ({exc}):\n{out}"
            ) from exc

    def add(self, *args: str, **kwargs: Any) -> str:
        """Run a write command with --json; the id of the record its first event is about."""
        events = self.json(*args, **kwargs)["events"]
        assert events, f"`self {' '.join(args)}` wrote no event"
        payload = events[0]["payload"]
        return str(payload.get("entity") or payload.get("work") or events[0]["id"])

    def rows(self, *args: str) -> list[dict[str, Any]]:
        """`self state list ARGS --json`."""
        rows = self.json("state", "list", *args)
        assert isinstance(rows, list), rows
        return rows

    def by_id(self, *args: str) -> dict[str, dict[str, Any]]:
        return {row["id"]: row for row in self.rows(*args)}

    def log_file(self, project: str = PROJECT) -> Path:
        """The last segment file of a project's log."""
        segments = sorted((self.root / "projects" / project / "log").glob("*.jsonl"))
        assert segments, f"project {project} has no log segment in {self.root}"
        return segments[-1]

    def files(self) -> dict[str, bytes]:
        """Every file of the store that git tracks or could (all but `.git/` and `.local/`)."""
        return {
            str(p.relative_to(self.root)): p.read_bytes()
            for p in sorted(self.root.rglob("*"))
            if p.is_file() and p.relative_to(self.root).parts[0] not in (".git", ".local")
        }

    def config_path(self) -> Path:
        return self.root / "workspace.json"

    def edit_config(self, **changes: Any) -> None:
        """Change workspace.json by hand: read the JSON, merge nested keys, write it back."""
        path = self.config_path()
        data = json.loads(path.read_text("utf-8"))
        for key, value in changes.items():
            if isinstance(value, dict):
                data.setdefault(key, {}).update(value)
            else:
                data[key] = value
        path.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
