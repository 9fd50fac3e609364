"""The installed `self` console script as a real process: it starts, its exit codes reach the
shell, stdin is read from a pipe, a store's warning is one line on stderr, and a reader that
goes away ends it quietly. The other e2e tests run the same entry point (`cli.main.run`) in
the test process (tests/support/selfrun.py); these check what only a process shows."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from service import __version__
from tests.support.selfrun import SELF, TIMEOUT, Store, describe, run_self

pytestmark = pytest.mark.process  # every `self` here is a real process


def test_the_console_script_starts_and_prints_its_version(store: Store) -> None:
    proc = store.run("--version")
    assert proc.args[0] == SELF, "not a real process"
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"self {__version__}\n", ""), describe(proc)


def test_exit_codes_0_1_2_reach_the_shell(store: Store) -> None:
    ok = store.run("idea", "a fine idea")
    assert ok.returncode == 0 and ok.stderr == "", describe(ok)
    assert re.fullmatch(r"entity\.confirmed [0-9a-z]{10,25}\n", ok.stdout), ok.stdout

    bad = store.run("state", "show", "zzzzzz")
    assert bad.returncode == 1 and bad.stdout == "", describe(bad)
    assert bad.stderr.startswith("self: ") and "Traceback" not in bad.stderr, describe(bad)

    store.edit_config(caps={"full_tokens": 20})
    store.ok("goal", "short goal")
    refused = store.run("goal", "a longer goal that fits the cap alone but not beside another")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, describe(refused)

    # the shell sees the same codes (a pipeline's status is its last command's)
    shell = subprocess.run(
        ["bash", "-c", f'{SELF} state show zzzzzz; echo "exit=$?"'],
        env=store.env(),
        cwd=store.cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert shell.stdout == "exit=1\n", shell


def test_json_on_stdout_is_one_document_through_a_pipe(store: Store) -> None:
    store.ok("goal", "ship the importer")
    piped = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f"{SELF} state list --json | cat"],
        env=store.env(),
        cwd=store.cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert piped.returncode == 0 and piped.stderr == "", piped
    [row] = json.loads(piped.stdout)
    assert row["text"] == "ship the importer"


def test_the_gate_reads_its_hook_from_stdin(tmp_path: Path, store: Store) -> None:
    hook = {"tool_name": "Bash", "tool_input": {"command": "git push"}, "cwd": str(tmp_path)}
    proc = run_self(("gate",), store.env(), input=json.dumps(hook), cwd=tmp_path)
    assert proc.args[0] == SELF, "not a real process"
    assert proc.returncode == 0, describe(proc)
    assert json.loads(proc.stdout)["decision"] == "ask"


def test_a_store_warning_is_one_line_on_stderr(store: Store) -> None:
    """A git lock a killed write left is removed by the next write, which says so in one line
    (cli/main.py: the warning hook), not a Python warning with its source line."""
    store.ok("idea", "first")
    git = store.root / ".git"
    (git / "index.lock").write_bytes(b"")  # what a write killed holding the index lock leaves
    (git / "selfhub-lock").write_text("index.lock\n", "utf-8")
    proc = store.run("idea", "second")
    assert proc.returncode == 0, describe(proc)
    said = "self: warning: removed .git/index.lock, left by a selfhub write that was killed\n"
    assert proc.stderr == said, describe(proc)


def test_a_reader_that_goes_away_ends_it_quietly(store: Store) -> None:
    """`self … | head -1`: the closed pipe prints no traceback (cli/main.py: BrokenPipeError)."""
    with subprocess.Popen(
        [SELF, "export", "jsonschema"],
        env=store.env(),
        cwd=store.cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # before the process has written anything
        err = proc.stderr.read()
        proc.wait(timeout=TIMEOUT)
    assert err == b"", err.decode("utf-8", "replace")
