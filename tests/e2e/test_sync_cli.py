"""`self remote`, `self sync`, `self clone` as processes: output, exit codes, messages."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.selfrun import Store, base_env, describe, run_self
from tests.support.sync_support import free_port, http_git


def bare(path: Path) -> Path:
    subprocess.run(["git", "init", "--bare", "-q", str(path)], check=True)
    return path


def test_remote_add_list_remove(store: Store, tmp_path: Path) -> None:
    remote = bare(tmp_path / "r.git")
    added = store.json("remote", "add", str(remote))
    assert added == {"name": "origin", "url": str(remote)}
    store.ok("remote", "add", "git://127.0.0.1:9/x.git", "--name", "backup")
    rows = store.json("remote", "list")
    assert [(r["name"], r["url"], r["synced"]) for r in rows] == [
        ("backup", "git://127.0.0.1:9/x.git", None),
        ("origin", str(remote), None),
    ]
    assert "never synced" in store.ok("remote", "list")
    store.ok("remote", "remove", "backup")
    assert [r["name"] for r in store.json("remote", "list")] == ["origin"]
    gone = store.run("remote", "remove", "backup")
    assert gone.returncode == 1 and "no remote named 'backup'" in gone.stderr


def test_sync_and_clone_round_trip(store: Store, tmp_path: Path) -> None:
    store.ok("remote", "add", str(tmp_path / "team.git"), "--init")
    first = store.json("sync")
    assert first["created"] and first["pushed"] >= 1
    goal = store.add("goal", "teams share one typed state")
    summary = store.json("sync")
    assert (summary["pushed"], summary["pulled"], summary["retries"]) == (1, 0, 0)
    assert summary["head"] == first["head"] or summary["head"]

    cloned = run_self(("clone", str(tmp_path / "team.git"), str(tmp_path / "bob"), "--json"), base_env())
    assert cloned.returncode == 0, describe(cloned)
    bob = Store(tmp_path / "bob", "app")
    assert goal in {row["id"] for row in bob.rows()}
    bob.add("decide", "one log per project", "--why", "small pushes")
    assert "1 pushed" in bob.ok("sync")
    assert "1 pulled" in store.ok("sync")
    assert store.files() == bob.files()


def test_an_unreachable_remote_exits_1_and_says_so(store: Store) -> None:
    port = free_port()
    store.ok("remote", "add", f"git://127.0.0.1:{port}/ws.git")
    before = store.files()
    proc = store.run("sync", "--timeout", "2")
    assert proc.returncode == 1, describe(proc)
    assert f"127.0.0.1:{port}" in proc.stderr and "untouched" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert store.files() == before


def test_a_silent_remote_times_out_after_timeout(store: Store, tmp_path: Path) -> None:
    """A server that takes the connection and never answers: `--timeout 1` ends it."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel completes the handshakes; nothing ever reads or writes
        url = f"git://127.0.0.1:{silent.getsockname()[1]}/ws.git"
        store.ok("remote", "add", url)
        before = store.files()
        started = time.monotonic()
        proc = store.run("sync", "--timeout", "1")
        took = time.monotonic() - started
        cloned = run_self(("clone", url, str(tmp_path / "c"), "--timeout", "1"), base_env())
    assert proc.returncode == 1 and "no answer within 1 s" in proc.stderr, describe(proc)
    assert "untouched" in proc.stderr and "Traceback" not in proc.stderr
    assert took < 5 and store.files() == before
    assert cloned.returncode == 1 and "no answer within 1 s" in cloned.stderr, describe(cloned)
    assert not (tmp_path / "c").exists()


def test_a_remote_that_is_not_a_workspace_is_refused(store: Store, tmp_path: Path) -> None:
    work = tmp_path / "plain"
    env = {**base_env(), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@x"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True, env=env)
    (work / "README.md").write_text("hello\n")
    subprocess.run(["git", "add", "."], cwd=work, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "x"], cwd=work, check=True, env=env)
    remote = bare(tmp_path / "r.git")
    subprocess.run(["git", "push", "-q", str(remote), "main"], cwd=work, check=True, env=env)
    store.ok("remote", "add", str(remote))
    proc = store.run("sync")
    assert proc.returncode == 1 and "not a selfhub workspace" in proc.stderr, describe(proc)
    clone = run_self(("clone", str(remote), str(tmp_path / "c")), base_env())
    assert clone.returncode == 1 and "not a selfhub workspace" in clone.stderr
    assert not (tmp_path / "c").exists()


def test_a_wrong_token_is_never_printed(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "served"
    root.mkdir()
    bare(root / "ws.git")
    secret = "s3cret-0f1e2d3c4b5a"
    with http_git(root, "alice", "the-right-token") as port:
        store.ok("remote", "add", f"http://127.0.0.1:{port}/ws.git")
        proc = store.run("sync", env_extra={"SELF_TOKEN": secret, "SELF_GIT_USERNAME": "alice"})
    assert proc.returncode == 1, describe(proc)
    assert "token was refused" in proc.stderr
    assert secret not in proc.stderr and secret not in proc.stdout
    assert secret.encode() not in (store.root / ".git" / "config").read_bytes()


@pytest.mark.slow
def test_two_remotes_diverged_sync_pushes_one_merge(store: Store, tmp_path: Path) -> None:
    for name in ("x", "y"):
        store.ok("remote", "add", str(tmp_path / f"{name}.git"), "--init", "--name", name)
        store.json("sync", name)
    cloned = run_self(("clone", str(tmp_path / "x.git"), str(tmp_path / "bob")), base_env())
    assert cloned.returncode == 0, describe(cloned)
    bob = Store(tmp_path / "bob", "app")
    bob.ok("remote", "add", str(tmp_path / "y.git"), "--name", "y")
    bob.json("sync", "y")
    store.add("goal", "published on x")
    assert store.json("sync", "x")["pushed"] == 1
    bob.add("decide", "published on y", "--why", "to diverge")
    assert bob.json("sync", "y")["pushed"] == 1
    alice_merge = store.json("sync", "y")
    assert alice_merge["merged"] and (alice_merge["pulled"], alice_merge["pushed"]) == (1, 1)
    assert "merge of both heads" in bob.ok("sync")  # origin is x: the same pair, merged by bob
    assert store.json("sync", "x")["head"] == alice_merge["head"]
    assert bob.json("sync", "y")["head"] == alice_merge["head"]
    assert store.files() == bob.files()


def test_sync_with_no_remote_named_syncs_every_remote(store: Store, tmp_path: Path) -> None:
    for name in ("x", "y"):
        store.ok("remote", "add", str(tmp_path / f"{name}.git"), "--init", "--name", name)
    store.add("goal", "everywhere")
    printed = store.ok("sync")
    assert printed.count("published the local history to") == 2, printed  # one line a remote
    every = store.json("sync")
    assert [s["remote"] for s in every["syncs"]] == ["x", "y"] and every["failed"] == []
    assert {s["head"] for s in every["syncs"]} == {every["head"]}
    store.ok("remote", "add", str(tmp_path / "gone.git"), "--name", "zz")
    store.add("goal", "one more")
    result = run_self(("sync",), store.env())
    assert result.returncode == 1, describe(result)
    assert "zz: no repository at" in result.stderr and "synced with x: 0 pulled, 1 pushed" in result.stdout
