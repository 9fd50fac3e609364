"""A `self` write killed (SIGKILL) while it holds a git lock file: the next write clears the
lock its dead predecessor left (under the store lock no other selfhub writer exists), and the
store stays whole. A lock planted by hand is cleared too, once it is clearly stale."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.selfrun import SELF, Store, describe

pytestmark = pytest.mark.process  # real `self` processes: signals, locks, contention

ATTEMPTS = 60  # targeted kills at most; most land inside the lock's lifetime
WANTED = 3  # locks left behind before the test is satisfied


def kill_while(store: Store, lock: Path, text: str) -> bool:
    """Run `self idea TEXT` and SIGKILL it the moment `lock` appears; True if it was left behind."""
    proc = subprocess.Popen(
        [SELF, "idea", text],
        env=store.env(),
        cwd=store.cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if lock.exists():
                os.kill(proc.pid, signal.SIGKILL)
                break
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    return lock.exists()


def git(store: Store, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=store.root, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    "lock",
    [
        "refs/heads/main.lock",
        # lives a shorter time than the ref's lock: more kills miss it, up to half a minute
        pytest.param("index.lock", marks=pytest.mark.slow),
    ],
)
def test_a_write_killed_holding_a_git_lock_does_not_block_the_next(store: Store, lock: str) -> None:
    path = store.root / ".git" / lock
    written = []
    for attempt in range(ATTEMPTS):
        if not kill_while(store, path, f"killed {attempt}"):
            continue
        after = store.run("idea", f"written after kill {attempt}")
        assert after.returncode == 0 and "Traceback" not in after.stderr, describe(after)
        assert f"removed .git/{lock}" in after.stderr, describe(after)
        assert not path.exists(), f"{lock} is still there after the next write"
        written.append(f"written after kill {attempt}")
        if len(written) == WANTED:
            break
    assert written, f"no kill of {ATTEMPTS} landed while {lock} existed"
    git(store, "fsck", "--no-progress")
    assert git(store, "status", "--porcelain") == ""
    assert "needs repair" not in store.ok("doctor")
    assert set(written) <= {row["text"] for row in store.rows()}


def test_a_planted_ref_lock_is_cleared_once_stale(store: Store) -> None:
    lock = store.root / ".git" / "refs" / "heads" / "main.lock"
    lock.write_bytes(b"")
    wrote = store.run("idea", "after a planted lock")
    assert wrote.returncode == 0, describe(wrote)
    assert not lock.exists()
    assert git(store, "status", "--porcelain") == ""


def test_doctor_reports_a_stale_lock_and_repair_removes_it(store: Store) -> None:
    lock = store.root / ".git" / "index.lock"
    lock.write_bytes(b"")
    an_hour_ago = time.time() - 3600
    os.utime(lock, (an_hour_ago, an_hour_ago))
    found = store.json("doctor")
    assert found["locks"] == [".git/index.lock"], found
    assert ".git/index.lock" in store.ok("doctor")
    store.ok("doctor", "--repair")
    assert not lock.exists()
    assert store.json("doctor")["locks"] == []
