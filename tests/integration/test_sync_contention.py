"""Other pushes meeting a sync on a remote by path: a push landing during the fetch, a ref
locked by another push. Both are contention, retried like a rejected push."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from service.adapters.sync import Options, sync
from service.adapters.sync.errors import KeptMoving, SyncError
from tests.support.sync_support import FAST, append, event_ids, pair, remote_ids


def test_a_push_during_the_fetch_of_a_path_remote_is_retried(tmp_path: Path) -> None:
    """dulwich's in-process fetch reads the remote's refs again after copying the pack: a push
    landing in between (here: from the progress callback) must not become the head to merge on."""
    path, a, b = pair(tmp_path)
    append(a, 1, text="first")
    sync(a, options=FAST)
    mine = append(b, 1, text="mine")
    pushed: list[int] = []

    def step(what: str, done: int, total: int) -> None:
        if not pushed:
            pushed.append(len(append(a, 1, text="during")))
            sync(a, options=FAST)

    summary = sync(b, options=Options(tries=8, timeout=5, pause=0.01, max_pause=0.05, stage=step))
    assert pushed and summary.retries >= 1
    sync(a, options=FAST)
    assert sorted(event_ids(a)) == sorted(event_ids(b)) == sorted(remote_ids(path))
    assert mine[0].id in remote_ids(path)


def test_a_locked_ref_on_a_path_remote_is_a_rejection_retried(tmp_path: Path) -> None:
    path, _, b = pair(tmp_path)
    append(b, 1)
    lock = path / "refs" / "heads" / "main.lock"
    lock.write_bytes(b"")
    patient = Options(tries=30, timeout=5, pause=0.02, max_pause=0.1)
    timer = threading.Timer(0.3, lock.unlink)
    timer.start()
    try:
        summary = sync(b, options=patient)
    finally:
        timer.join()
    assert summary.retries >= 1 and summary.pushed == 1
    assert sorted(remote_ids(path)) == sorted(event_ids(b))


def test_a_ref_that_stays_locked_ends_in_kept_moving(tmp_path: Path) -> None:
    path, _, b = pair(tmp_path)
    append(b, 1)
    (path / "refs" / "heads" / "main.lock").write_bytes(b"")
    with pytest.raises(KeptMoving):
        sync(b, options=Options(tries=3, timeout=5, pause=0.01, max_pause=0.02))


def test_a_stale_lock_on_the_remote_tracking_ref_is_cleared(tmp_path: Path) -> None:
    """refs/remotes/origin/main says which commits another remote holds; a lock a crash left
    on it must not keep it from moving."""
    from dulwich.refs import Ref

    _, _, b = pair(tmp_path)
    lock = b.root / ".git" / "refs" / "remotes" / "origin" / "main.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_bytes(b"")
    an_hour_ago = time.time() - 3600
    os.utime(lock, (an_hour_ago, an_hour_ago))
    append(b, 1)
    summary = sync(b, options=FAST)
    assert b.repo.refs[Ref(b"refs/remotes/origin/main")].decode() == summary.head
    assert not lock.exists()


def test_a_remote_ref_lock_a_killed_push_left_is_named(tmp_path: Path) -> None:
    """A lock older than any push holds one: no retries in vain, one message naming the file."""
    path, _, b = pair(tmp_path)
    append(b, 1)
    lock = path / "refs" / "heads" / "main.lock"
    lock.write_bytes(b"")
    an_hour_ago = time.time() - 3600
    os.utime(lock, (an_hour_ago, an_hour_ago))
    with pytest.raises(SyncError, match="remove that file") as raised:
        sync(b, options=Options(tries=3, timeout=5, pause=0.01, max_pause=0.02))
    assert str(lock) in str(raised.value) and not isinstance(raised.value, KeptMoving)
    assert lock.exists()  # not ours to remove
