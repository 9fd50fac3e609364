"""`self` commands on clocks that disagree, and a remote whose published event was edited."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.selfrun import Store, base_env, describe, run_self

AHEAD = {"SELF_CLOCK_OFFSET_MS": "5000"}


def git(*args: str, cwd: Path) -> None:
    env = {**base_env(), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost", "HOME": str(cwd)}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def joined(store: Store, tmp_path: Path, name: str) -> Store:
    cloned = run_self(("clone", str(tmp_path / "team.git"), str(tmp_path / name)), base_env())
    assert cloned.returncode == 0, describe(cloned)
    return Store(tmp_path / name, store.project)


@pytest.mark.slow
def test_three_replicas_one_clock_five_seconds_ahead_lose_nothing(store: Store, tmp_path: Path) -> None:
    """The reported case: the fast clock writes and syncs; two correct clocks fetch it and
    write two events each; then everyone syncs. Every event must be everywhere, once."""
    store.ok("remote", "add", str(tmp_path / "team.git"), "--init")
    store.ok("sync", env_extra=AHEAD)
    bob, carol = joined(store, tmp_path, "bob"), joined(store, tmp_path, "carol")
    written = [store.add("goal", "ship on a clock that runs fast", env_extra=AHEAD)]
    store.ok("sync", env_extra=AHEAD)
    for replica in (bob, carol):
        replica.ok("sync")
        written += [replica.add("decide", f"{replica.root.name} decides {n}", "--why", "w") for n in (1, 2)]
    assert len(set(written)) == 5, "two writers minted the same id"
    pushed = {}
    for replica in (store, bob, carol, store, bob, carol):
        extra = AHEAD if replica is store else None
        summary = replica.json("sync", env_extra=extra)
        pushed[replica.root.name] = pushed.get(replica.root.name, 0) + summary["pushed"]
    assert pushed == {"store": 0, "bob": 2, "carol": 2}
    for replica in (store, bob, carol):
        listed = [row["id"] for row in replica.rows("--all")]
        assert all(listed.count(i) == 1 for i in written), f"{replica.root.name} lacks an event"
    assert store.files() == bob.files() == carol.files()


@pytest.mark.slow
def test_a_remote_edit_of_an_event_fails_the_sync_and_doctor_names_it(store: Store, tmp_path: Path) -> None:
    store.ok("remote", "add", str(tmp_path / "team.git"), "--init")
    store.ok("sync")
    bob = joined(store, tmp_path, "bob")
    goal = store.add("goal", "the original words")
    store.ok("sync")
    bob.ok("sync")
    work = tmp_path / "plain"
    git("clone", "-q", "-b", "main", str(tmp_path / "team.git"), str(work), cwd=tmp_path)
    segment = work / "projects" / "app" / "log" / "000000.jsonl"
    segment.write_bytes(segment.read_bytes().replace(b"the original words", b"words put in my mouth"))
    git("commit", "-q", "-am", "an edit by hand", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)

    before = bob.files()
    failed = bob.run("sync")
    assert failed.returncode == 1, describe(failed)
    assert "remote origin" in failed.stderr and "never edited" in failed.stderr
    assert "Traceback" not in failed.stderr and failed.stderr.count("\n") == 1
    assert bob.files() == before
    assert "the original words" in bob.ok("state", "show", goal)
    doctor = bob.ok("doctor")
    assert "remote origin" in doctor and "other bytes" in doctor
    [flag] = bob.json("doctor")["remotes"]
    assert flag["remote"] == "origin" and len(flag["ids"]) == 1

    git("revert", "--no-edit", "HEAD", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    bob.ok("sync")
    assert bob.json("doctor")["remotes"] == []
    assert "the original words" in bob.ok("state", "show", goal)
