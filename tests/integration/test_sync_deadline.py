"""Bounded syncs and clones against real misbehaving servers on 127.0.0.1, and a server that
refuses a push for its own reason.

A black hole takes the connection and never answers: `timeout` (one wait) ends it, over HTTP
too (no silent retries). A trickler answers one byte at a time, each well within `timeout`:
only the overall `deadline` ends it, cutting the connection mid-read. Neither leaves a partial
clone folder or changes the local store. A server whose pre-receive hook rejects the push is
not contention: the sync stops at once and says what the server said.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.adapters.sync import Options, SyncError, Unreachable, clone, remotes, sync
from tests.support.bad_servers import OPENINGS, REASON, black_hole, refusing, trickler
from tests.support.sync_support import append, bare, files, git_daemon, http_git, new_store

TIMEOUT, DEADLINE = 1.0, 2.0
SLACK = 3.0  # process scheduling on a busy two-core machine

BOUNDED = Options(tries=3, timeout=TIMEOUT, deadline=DEADLINE, pause=0.01, max_pause=0.05)


def _sync_takes(tmp_path: Path, url: str) -> tuple[float, SyncError]:
    store = new_store(tmp_path / "local")
    append(store, 2)
    remotes.add(store.repo, url)
    before = files(store)
    started = time.monotonic()
    with pytest.raises(SyncError) as caught:
        sync(store, options=BOUNDED)
    took = time.monotonic() - started
    assert files(store) == before, "a failed sync changed the local store"
    return took, caught.value


def _clone_takes(tmp_path: Path, url: str) -> tuple[float, SyncError]:
    target = tmp_path / "cloned"
    started = time.monotonic()
    with pytest.raises(SyncError) as caught:
        clone(url, target, BOUNDED)
    took = time.monotonic() - started
    assert not target.exists(), "a failed clone left a folder behind"
    return took, caught.value


@pytest.mark.parametrize("scheme", ["http", "git"])
def test_a_black_hole_ends_after_one_timeout(tmp_path: Path, scheme: str) -> None:
    with black_hole() as port:
        url = f"{scheme}://127.0.0.1:{port}/ws.git"
        took, error = _sync_takes(tmp_path, url)
        assert isinstance(error, Unreachable) and f"no answer within {TIMEOUT:g} s" in str(error)
        assert took < TIMEOUT + SLACK, f"a sync against a black hole took {took:.1f} s"
        took, error = _clone_takes(tmp_path, url)
        assert isinstance(error, Unreachable) and f"no answer within {TIMEOUT:g} s" in str(error)
        assert took < TIMEOUT + SLACK, f"a clone against a black hole took {took:.1f} s"


@pytest.mark.parametrize("scheme", ["http", "git"])
def test_a_trickling_server_is_cut_at_the_deadline(tmp_path: Path, scheme: str) -> None:
    with trickler(OPENINGS[scheme]) as port:
        url = f"{scheme}://127.0.0.1:{port}/ws.git"
        took, error = _sync_takes(tmp_path, url)
        assert f"did not finish within {DEADLINE:g} s" in str(error), error
        assert error.fields == ("deadline",)  # the option that raises it (the CLI: --deadline)
        assert DEADLINE - 0.5 < took < DEADLINE + SLACK, f"a sync against a trickle took {took:.1f} s"
        took, error = _clone_takes(tmp_path, url)
        assert f"did not finish within {DEADLINE:g} s" in str(error), error
        assert DEADLINE - 0.5 < took < DEADLINE + SLACK, f"a clone against a trickle took {took:.1f} s"


def test_an_ssh_that_never_answers_is_killed_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stand-in for ssh that starts and says nothing: no per-wait timeout of ssh's own
    applies, so only the deadline ends it, by killing the process."""
    silent = tmp_path / "silent-ssh"
    silent.write_text("#!/bin/sh\nexec sleep 30\n")
    silent.chmod(0o755)
    monkeypatch.setenv("SELF_SSH_COMMAND", str(silent))
    took, error = _sync_takes(tmp_path, "ssh://git@127.0.0.1/ws.git")
    assert f"did not finish within {DEADLINE:g} s" in str(error), error
    assert took < DEADLINE + SLACK, f"a sync through a silent ssh took {took:.1f} s"
    took, error = _clone_takes(tmp_path, "ssh://git@127.0.0.1/ws.git")
    assert f"did not finish within {DEADLINE:g} s" in str(error), error
    assert took < DEADLINE + SLACK, f"a clone through a silent ssh took {took:.1f} s"


def test_a_sync_within_its_deadline_is_untouched_by_it(tmp_path: Path) -> None:
    """The watchdog ends with the sync: a store that synced keeps working after the deadline."""
    remote = bare(tmp_path / "remote.git")
    store = new_store(tmp_path / "a")
    remotes.add(store.repo, str(remote))
    quick = Options(timeout=TIMEOUT, deadline=0.5)
    assert sync(store, options=quick).created
    time.sleep(0.6)
    append(store, 1)
    assert sync(store, options=quick).pushed == 1


# --- a push the server refuses --------------------------------------------------------------------


@contextlib.contextmanager
def _served(root: Path, scheme: str) -> Iterator[str]:
    if scheme == "git":
        with git_daemon(root) as port:
            yield f"git://127.0.0.1:{port}/ws.git"
    else:
        with http_git(root, "alice", "tok-1") as port:
            yield f"http://127.0.0.1:{port}/ws.git"


@pytest.mark.parametrize("scheme", ["git", "http"])
def test_a_push_the_server_refuses_stops_at_once_with_its_reason(
    tmp_path: Path, scheme: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SELF_TOKEN", "tok-1")
    monkeypatch.setenv("SELF_GIT_USERNAME", "alice")
    root = tmp_path / "served"
    root.mkdir()
    repo = bare(root / "ws.git")
    with _served(root, scheme) as url:
        store = new_store(tmp_path / "a")
        remotes.add(store.repo, url)
        assert sync(store, options=BOUNDED).created
        refusing(repo)
        append(store, 1)
        pushes: list[str] = []
        hooked = Options(tries=8, timeout=5, pause=0.01, max_pause=0.05, hook=pushes.append)
        with pytest.raises(SyncError) as caught:
            sync(store, options=hooked)
    message = str(caught.value)
    assert REASON in message, message
    assert "kept moving" not in message and "\n" not in message
    assert pushes.count("committed") == 1, f"a refused push was tried again: {pushes}"
