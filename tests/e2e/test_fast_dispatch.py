"""The `self` executable (cli/fast.py) answers the hot commands without the typer app; for
the same arguments, stdin and store it prints what the typer app (`python -m cli.main`)
prints, on both streams, and exits with the same code: good input, bad input, `--help`,
global options anywhere, no store at all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.selfrun import SELF, TIMEOUT, Store, base_env, describe

TYPER = (sys.executable, "-m", "cli.main")


def hook(command: str, cwd: Path | None = None) -> str:
    """A pre-tool-use hook's JSON as a coding agent sends it."""
    doc: dict[str, object] = {
        "session_id": "5f0c2b1e",
        "transcript_path": "/tmp/transcript.jsonl",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run it"},
    }
    if cwd is not None:
        doc["cwd"] = str(cwd)
    return json.dumps(doc)


@pytest.fixture(scope="module")
def ledger(module_store: Store) -> Store:
    """A store whose project holds a goal, a note and a policy that denies force-pushes."""
    module_store.ok("goal", "ship the fast path")
    module_store.ok("state", "add", "hooks run on every call", "--label", "note")
    module_store.ok(
        "decide", "never force-push", "--gate", "deny", "--tool", "Bash", "--pattern", "git push*--force*"
    )
    return module_store


def both(
    args: tuple[str, ...], env: dict[str, str], cwd: Path, stdin: str = ""
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    def run(command: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *args],
            env=env,
            cwd=cwd,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )

    return run((SELF,)), run(TYPER)


def same(
    args: tuple[str, ...], env: dict[str, str], cwd: Path, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    fast, typer = both(args, env, cwd, stdin)
    assert (fast.returncode, fast.stdout, fast.stderr) == (typer.returncode, typer.stdout, typer.stderr), (
        f"fast path:\n{describe(fast)}\ntyper path:\n{describe(typer)}"
    )
    return fast


IN_STORE = [
    (("--version",), ""),
    (("--version", "--help"), ""),
    (("gate",), hook("ls -la")),
    (("gate",), hook("git push --force origin main")),
    (("gate", "--json"), hook("rm -rf build")),
    (("gate",), "not json"),
    (("gate",), ""),
    (("gate", "--help"), ""),
    (("gate", "extra"), hook("ls")),
    (("gate", "--json=yes"), hook("ls")),
    (("gate", "--project", "app"), hook("ls")),
    (("--project", "nope", "gate"), hook("ls")),
    (("agent", "context"), ""),
    (("agent", "context", "--service"), ""),
    (("agent", "context", "--service", "--help"), ""),
    (("agent", "context", "--service", "ftp://nowhere"), ""),
    (("agent", "context", "--service=http://127.0.0.1:9/git/none.git"), ""),
    (("agent", "context", "--help"), ""),
    (("agent", "context", "--plain"), ""),
    (("--project", "nope", "agent", "context"), ""),
    (("context",), ""),
    (("context", "--plain"), ""),
    (("context", "--json"), ""),
    (("context", "--json", "--budget", "400"), ""),
    (("context", "--budget=2000", "--plain"), ""),
    (("context", "--budget", "5"), ""),
    (("context", "--budget", "007", "--json"), ""),
    (("context", "--budget", "many"), ""),
    (("context", "--budget", "-3"), ""),
    (("context", "--budget"), ""),
    (("context", "--plain", "--plain"), ""),
    (("context", "--help"), ""),
    (("context", "--project", "nope"), ""),
    (("context", "--project=app", "--json"), ""),
]


@pytest.mark.parametrize(("args", "stdin"), IN_STORE, ids=[" ".join(a) or "-" for a, _ in IN_STORE])
def test_the_fast_path_answers_as_the_typer_app(ledger: Store, args: tuple[str, ...], stdin: str) -> None:
    same(args, ledger.env(), ledger.cwd, stdin)


def test_a_policy_denies_on_both_paths(ledger: Store) -> None:
    denied = json.loads(
        same(("gate",), ledger.env(), ledger.cwd, hook("git push --force origin main")).stdout
    )
    assert denied["decision"] == "deny" and denied["policy"], denied


def test_the_context_names_the_project_on_both_paths(ledger: Store) -> None:
    shown = same(("agent", "context"), ledger.env(), ledger.cwd).stdout
    assert "ship the fast path" in shown, shown


@pytest.mark.parametrize(
    "args",
    [("gate",), ("agent", "context"), ("context", "--plain"), ("--workspace", "missing", "context")],
    ids=" ".join,
)
def test_without_a_store_both_paths_say_the_same(tmp_path: Path, args: tuple[str, ...]) -> None:
    same(args, base_env(), tmp_path, hook("git push", tmp_path))


def test_a_workspace_given_on_the_command_line_is_read_on_both_paths(ledger: Store, tmp_path: Path) -> None:
    env = base_env()
    shown = same(("--workspace", str(ledger.root), "--project", "app", "context", "--plain"), env, tmp_path)
    assert "ship the fast path" in shown.stdout, shown.stdout
