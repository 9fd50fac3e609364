"""Running `self` against a store: in this process through the CLI's own entry point, or as
the real `self` executable in a subprocess (used by tests/e2e/conftest.py).

Either way a run answers what a `self` process would: a CompletedProcess with the exit code,
stdout and stderr, after the command saw only the environment, working folder and stdin it
was given. In this process (the default) `cli.fast.run`, the `self` executable's entry
point (the hot commands there, every other through `cli.main.run`), runs inside typer's
CliRunner isolation (stdin, stdout, stderr and os.environ swapped for the call), with the working
folder, the CLI's global options and a fresh process's warning filters set for the call and
put back after it, and every store it opened closed after it. A test marked `process` (the
console-script smoke tests, and those about locks, signals and concurrent processes) or a
run with `--self-process` gets a real process for every `self` it runs; `run_process`
always does. Threads that run `self` at once need `run_process`: the isolation is global.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

VENV_BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]
PROJECT = "app"
TIMEOUT = 60

Runner = Callable[..., "subprocess.CompletedProcess[str]"]


class Mode:
    """Whether `run_self` starts a real process: set per test by tests/conftest.py."""

    process = False


MODE = Mode()


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
    """`self ARGS…` with exactly `env`, in `cwd` (else this process's), reading `input`: in
    this process unless the test is marked `process` (or the run has --self-process), or the
    command is `self serve` (which a test runs to see it refused: were it to start serving,
    it would stop at the timeout, and its signal handlers would stay out of this process)."""
    real = MODE.process or args[:1] == ("serve",)
    return (run_process if real else run_in_process)(args, env, input, cwd)


def run_process(
    args: tuple[str, ...], env: dict[str, str], input: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The real `self` executable in a subprocess."""
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


# A fresh interpreter's warning filters (no -W, no PYTHONWARNINGS): the suite's own turn every
# warning into an error, where `self` shows a store's warning as one line on stderr.
FRESH_FILTERS: tuple[tuple[str, type[Warning], str], ...] = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, ""),
    ("ignore", PendingDeprecationWarning, ""),
    ("ignore", ImportWarning, ""),
    ("ignore", ResourceWarning, ""),
)


@contextlib.contextmanager
def _as_a_process(cwd: Path | None) -> Iterator[None]:
    """The working folder, warning filters and global options of a new `self` process, for
    the block; this process's own after it."""
    from cli.common import OPTIONS

    with warnings.catch_warnings(), contextlib.chdir(cwd or Path.cwd()):
        warnings.resetwarnings()
        for action, category, module in FRESH_FILTERS:
            warnings.filterwarnings(action, category=category, module=module)  # type: ignore[arg-type]
        vars(OPTIONS).clear()  # --workspace and --project of an earlier run
        try:
            with _stores_closed():
                yield
        finally:
            vars(OPTIONS).clear()


@contextlib.contextmanager
def _stores_closed() -> Iterator[None]:
    """Close every store the block opened (in this thread), as the end of a process would:
    a store the CLI leaves open would warn of its unclosed git packs in a later test."""
    from service.adapters.store.store import Store

    opened: list[Store] = []
    thread = threading.get_ident()
    init = Store.__init__

    def tracked(store: Store, *args: Any, **kwargs: Any) -> None:
        init(store, *args, **kwargs)
        if threading.get_ident() == thread:
            opened.append(store)

    Store.__init__ = tracked  # type: ignore[method-assign]
    try:
        yield
    finally:
        Store.__init__ = init  # type: ignore[method-assign]
        for store in opened:
            store.close()


def _exit_code(code: object) -> int:
    """What a process that raised SystemExit(code) exits with (a text is printed, exit 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _text(data: bytes) -> str:
    """Output as `subprocess.run(text=True)` reads it: UTF-8 with universal newlines."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def run_in_process(
    args: tuple[str, ...], env: dict[str, str], input: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`cli.fast.run(ARGS)` in this process, isolated as a `self` process would be; an
    exception it lets through is a traceback on stderr and exit 1, as in a process."""
    from typer.testing import CliRunner

    from cli.fast import run

    # the runner sets what `env` holds and unsets every other name, and puts all back after
    overrides: dict[str, str | None] = dict.fromkeys(os.environ) | dict(env)
    with CliRunner().isolation(input=input, env=overrides) as (out, err, _), _as_a_process(cwd):
        try:
            run(list(args))
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc.code)
        except Exception:
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = _text(out.getvalue()), _text(err.getvalue())
    return subprocess.CompletedProcess(["self", *args], code, stdout, stderr)


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
