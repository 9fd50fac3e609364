"""`self admin`: workspaces, users and tokens of a service's data directory; two real processes
creating tokens at once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.selfrun import SELF, base_env, describe, run_self

LOOP = """
import subprocess, sys
exe, data, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(count):
    proc = subprocess.run([exe, "admin", "token", "create", "ann", "--workspace", "team",
                           "--role", "reader", "--data", data], capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"token {i}: exit {proc.returncode}: {proc.stderr}")
    print(proc.stdout.strip(), flush=True)
"""


def admin(data: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_self(("admin", *args, "--data", str(data)), base_env(), cwd=cwd)


def ok(data: Path, *args: str, cwd: Path | None = None) -> str:
    proc = admin(data, *args, cwd=cwd)
    assert proc.returncode == 0, describe(proc)
    return proc.stdout


def test_workspace_user_token_round(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert "created workspace team" in ok(data, "workspace", "add", "team")
    ok(data, "workspace", "add", "other")
    assert ok(data, "workspace", "list").split() == ["other", "team"]
    assert json.loads(ok(data, "workspace", "list", "--json")) == ["other", "team"]
    assert (data / "workspaces" / "team" / "workspace.json").is_file()
    ok(data, "user", "add", "ann")

    created = admin(data, "token", "create", "ann", "--workspace", "team", "--role", "writer")
    assert created.returncode == 0, describe(created)
    token = created.stdout.strip()
    assert created.stdout == token + "\n" and token.startswith("shb_"), "stdout holds only the token"
    assert "not shown again" in created.stderr and token not in created.stderr

    listed, as_json = ok(data, "token", "list"), ok(data, "token", "list", "--json")
    assert token not in listed and token[8:] not in listed
    assert token not in as_json and token[8:] not in as_json
    (row,) = json.loads(as_json)
    assert (row["user"], row["workspace"], row["role"], row["prefix"]) == ("ann", "team", "writer", token[:8])
    assert row["revoked"] is None and row["last_used"] is None
    assert json.loads(ok(data, "token", "list", "--workspace", "other", "--json")) == []

    assert f"revoked {row['id']}" in ok(data, "token", "revoke", row["id"])
    (after,) = json.loads(ok(data, "token", "list", "--json"))
    assert after["revoked"] is not None
    assert "revoked" in ok(data, "token", "list")


def test_mistakes_are_one_line_and_exit_1(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ok(data, "workspace", "add", "team")
    ok(data, "user", "add", "ann")
    cases = [
        (("workspace", "add", "../up"), "not a valid workspace name"),
        (("workspace", "add", "team"), "already exists"),
        (("user", "add", "ann"), "already exists"),
        (("token", "create", "bob", "--workspace", "team", "--role", "reader"), "no user 'bob'"),
        (("token", "create", "ann", "--workspace", "nope", "--role", "reader"), "no workspace 'nope'"),
        (("token", "create", "ann", "--workspace", "team", "--role", "owner"), "not a role"),
        (("token", "revoke", "tk123"), "no token with id"),
    ]
    for args, message in cases:
        proc = admin(data, *args)
        assert proc.returncode == 1, describe(proc)
        assert message in proc.stderr and proc.stderr.count("\n") == 1, describe(proc)
        assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert not (tmp_path / "up").exists()


@pytest.mark.parametrize("spelling", [("--workspace", "team"), ("--workspace=team",)], ids=" ".join)
def test_the_workspace_option_under_admin_is_never_taken_for_a_store(
    tmp_path: Path, spelling: tuple[str, ...]
) -> None:
    data = tmp_path / "data"
    ok(data, "workspace", "add", "team")
    ok(data, "user", "add", "ann")
    # run where `team` is also a store folder: the option still names the data's workspace
    cwd = data / "workspaces"
    token = ok(data, "token", "create", "ann", *spelling, "--role", "reader", cwd=cwd)
    assert token.startswith("shb_")
    assert len(json.loads(ok(data, "token", "list", *spelling, "--json", cwd=cwd))) == 1


def test_the_data_directory_may_come_from_self_data(tmp_path: Path) -> None:
    env = {**base_env(), "SELF_DATA": str(tmp_path / "data")}
    made = run_self(("admin", "workspace", "add", "team"), env)
    assert made.returncode == 0, describe(made)
    assert run_self(("admin", "workspace", "list"), env).stdout.split() == ["team"]


# tokens each process creates (a `self` process each): the fast suite's few overlap too
@pytest.mark.parametrize("per_process", [4, pytest.param(12, marks=pytest.mark.slow)])
def test_two_processes_creating_tokens_at_once_both_succeed(tmp_path: Path, per_process: int) -> None:
    data = tmp_path / "data"
    ok(data, "workspace", "add", "team")
    ok(data, "user", "add", "ann")
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", LOOP, SELF, str(data), str(per_process)],
            env=base_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    tokens: list[str] = []
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
        tokens += out.split()
    assert len(tokens) == len(set(tokens)) == 2 * per_process
    rows = json.loads(ok(data, "token", "list", "--json"))
    assert len(rows) == 2 * per_process
    assert sorted(r["prefix"] for r in rows) == sorted(t[:8] for t in tokens)
