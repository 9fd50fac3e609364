"""A hostile remote cannot harm a replica: forged trees and events are refused at the intake
gate (service/adapters/sync/intake.py) on sync and clone, before a file is written or main moves, and
the store works afterwards (a write, and a sync with the remote put right)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.adapters.store import Store
from service.adapters.sync import SyncError, clone, remotes, sync
from service.adapters.sync.entries import bad_mode, bad_name
from service.adapters.sync.intake import (
    BadEvent,
    BadSettings,
    Oversize,
    RemoteRefused,
    UnsafeEntry,
)
from tests.support.forge import SEGMENT, forge, head, hostile_trees, leaky_event, read, reset
from tests.support.sync_support import FAST, append, bare, files, git_daemon, new_store, replica, track

EXPECTED: dict[str, tuple[type[RemoteRefused], str, str]] = {
    # case: (error, the path named, what the message says)
    "dot": (UnsafeEntry, ".", "'.' path component"),
    "dotdot": (UnsafeEntry, "..", "'..' path component"),
    "dot-git": (UnsafeEntry, ".git", "git's own folder"),
    "dot-GIT": (UnsafeEntry, ".GIT", "git's own folder"),
    "dot-git-trailing-dot": (UnsafeEntry, "projects/.git.", "git's own folder"),
    "symlink": (UnsafeEntry, "projects/app/log/000001.jsonl", "symbolic link"),
    "gitlink": (UnsafeEntry, "projects/app/log/000001.jsonl", "gitlink"),
    "non-utf8": (UnsafeEntry, "projects/app/log/\\xff\\xfe.jsonl", "not UTF-8"),
    "unknown-path": (UnsafeEntry, "notes.txt", "outside the store's layout"),
    "bad-settings": (BadSettings, "workspace.json", "not valid workspace settings"),
    "wrong-settings": (BadSettings, "workspace.json", "not valid workspace settings"),
    "huge-segment": (Oversize, "projects/app/log/000001.jsonl", "over the cap"),
    "leaky-event": (BadEvent, "projects/app/log/000000.jsonl", "machine-local or secret"),
    "long-line": (Oversize, "projects/app/log/000000.jsonl", "over the cap"),
    "not-canonical": (BadEvent, "projects/app/log/000000.jsonl", "canonical"),
    "other-log": (BadEvent, "projects/app/log/000000.jsonl", "another log"),
}


@pytest.fixture(scope="module")
def daemon_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    base = tmp_path_factory.mktemp("daemon")
    with git_daemon(base) as port:
        yield base, port


def _remote(tmp_path: Path, how: str, daemon: tuple[Path, int] | None) -> tuple[Path, str]:
    if how == "daemon":
        assert daemon is not None
        base, port = daemon
        name = f"h{time.monotonic_ns()}.git"
        return bare(base / name), f"git://127.0.0.1:{port}/{name}"
    path = bare(tmp_path / "remote.git")
    return path, str(path)


def _published(tmp_path: Path, url: str) -> Store:
    """Replica a, which published the workspace with two events in project app."""
    a = replica(tmp_path, "a", url)
    append(a, 2)
    sync(a, options=FAST)
    return a


def _outside(tmp_path: Path, store: Store) -> dict[str, bytes]:
    """Every file under tmp_path that is not inside a store's own folders or a remote."""
    return {
        str(p.relative_to(tmp_path)): p.read_bytes()
        for p in sorted(tmp_path.rglob("*"))
        if p.is_file() and not str(p.relative_to(tmp_path)).startswith(("remote.git", store.root.name))
    }


def _git_dir(store: Store) -> dict[str, bytes]:
    """.git's config, hooks and info: what a remote must never reach."""
    git_dir = store.root / ".git"
    return {
        str(p.relative_to(git_dir)): p.read_bytes()
        for p in sorted(git_dir.rglob("*"))
        if p.is_file() and p.relative_to(git_dir).parts[0] in ("config", "hooks", "info")
    }


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_sync_refuses_a_forged_tree(tmp_path: Path, case: str) -> None:
    path, url = _remote(tmp_path, "path", None)
    a = _published(tmp_path, url)
    victim = track(clone(url, tmp_path / "victim", FAST)[0])
    append(victim, 2)
    good = head(path)
    forge(path, hostile_trees(path)[case])
    before, git_before, outside = files(victim), _git_dir(victim), _outside(tmp_path, victim)
    local_head = victim.head()

    error, named, says = EXPECTED[case]
    with pytest.raises(error) as caught:
        sync(victim, options=FAST)
    message = str(caught.value)
    assert url in message and named in message and says in message, message
    assert "nothing was written and main did not move" in message
    assert victim.head() == local_head
    assert files(victim) == before and _git_dir(victim) == git_before
    assert _outside(tmp_path, victim) == outside
    assert not (victim.root / ".local" / "checkout").exists()

    # the store still works: a write, then a sync once the remote is put right
    append(victim, 1)
    reset(path, good)
    summary = sync(victim, options=FAST)
    assert summary.pushed == 3
    sync(a, options=FAST)
    assert files(a) == files(victim)


@pytest.mark.parametrize("case", ["dot", "symlink", "gitlink", "non-utf8", "leaky-event", "bad-settings"])
@pytest.mark.parametrize("how", ["path", "daemon"])
def test_clone_refuses_a_forged_tree(
    tmp_path: Path, request: pytest.FixtureRequest, case: str, how: str
) -> None:
    daemon = request.getfixturevalue("daemon_base") if how == "daemon" else None
    path, url = _remote(tmp_path, how, daemon)
    _published(tmp_path, url)
    forge(path, hostile_trees(path)[case])
    error, named, says = EXPECTED[case]
    with pytest.raises(error) as caught:
        clone(url, tmp_path / "c", FAST)
    message = str(caught.value)
    assert url in message and named in message and says in message, message
    assert not (tmp_path / "c").exists()
    assert not (tmp_path / "outside.txt").exists()


def test_a_daemon_remote_with_a_dot_entry_cannot_reach_git_config(
    tmp_path: Path, daemon_base: tuple[Path, int]
) -> None:
    """The reported attack end to end over git://: `./.git/config` with core.fsmonitor."""
    path, url = _remote(tmp_path, "daemon", daemon_base)
    _published(tmp_path, url)
    victim = track(clone(url, tmp_path / "victim", FAST)[0])
    config = (victim.root / ".git" / "config").read_bytes()
    forge(path, hostile_trees(path)["dot"])
    with pytest.raises(UnsafeEntry, match="'\\.' path component"):
        sync(victim, options=FAST)
    assert (victim.root / ".git" / "config").read_bytes() == config
    assert b"fsmonitor" not in config


def test_a_leaky_event_is_neither_folded_nor_republished(tmp_path: Path) -> None:
    """An event with origin.pid, a hostname, a home path and a token on remote X must not
    reach the replica's state, nor a second remote Y it syncs with."""
    path, url = _remote(tmp_path, "path", None)
    a = _published(tmp_path, url)
    victim = track(clone(url, tmp_path / "victim", FAST)[0])
    second = bare(tmp_path / "second.git")
    remotes.add(victim.repo, str(second), "second")
    sync(victim, "second", FAST)
    forge(path, {SEGMENT: (0o100644, read(path, SEGMENT) + leaky_event())})
    with pytest.raises(BadEvent) as caught:
        sync(victim, options=FAST)
    message = str(caught.value)
    for key in ("origin.pid", "refs.hostname", "payload.text"):
        assert key in message, message
    assert "4242" not in message and "alice" not in message and "ghp_" not in message
    assert all(e.id != "01kg0000000000000000000000" for e in victim.read("app").events)
    sync(victim, "second", FAST)
    assert b"ghp_" not in read(second, SEGMENT)
    del a


def test_the_gate_holds_for_a_merge_of_published_histories(tmp_path: Path) -> None:
    """A replica whose history another remote holds merges instead of rebasing: the remote's
    tree is checked on that way too."""
    path, url = _remote(tmp_path, "path", None)
    _published(tmp_path, url)
    victim = track(clone(url, tmp_path / "victim", FAST)[0])
    second = bare(tmp_path / "second.git")
    remotes.add(victim.repo, str(second), "second")
    append(victim, 1)
    sync(victim, "second", FAST)  # the local commit is published on `second`
    forge(path, hostile_trees(path)["symlink"])
    local_head = victim.head()
    with pytest.raises(UnsafeEntry, match="symbolic link"):
        sync(victim, options=FAST)
    assert victim.head() == local_head


def test_refusals_are_sync_errors_with_one_line(tmp_path: Path) -> None:
    """The CLI maps SyncError to exit 1 with its message: one line, no traceback."""
    path, url = _remote(tmp_path, "path", None)
    _published(tmp_path, url)
    forge(path, hostile_trees(path)["gitlink"])
    with pytest.raises(SyncError) as caught:
        clone(url, tmp_path / "c", FAST)
    assert "\n" not in str(caught.value)


def test_a_symlinked_segment_is_never_followed(tmp_path: Path) -> None:
    """A link a clone made before the gate existed: appends and reads refuse to go through it
    (O_NOFOLLOW), so nothing outside the store is written or committed."""
    from service.adapters.store.errors import NotRegular

    store = track(new_store(tmp_path / "s"))
    append(store, 1)
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"private\n")
    segment = store.root / "projects/app/log/000000.jsonl"
    segment.unlink()
    segment.symlink_to(outside)
    head_before = store.head()
    with pytest.raises(NotRegular, match="symbolic link"):
        append(store, 1)
    with pytest.raises(NotRegular, match="symbolic link"):
        store.read("app")
    assert outside.read_bytes() == b"private\n"
    assert store.head() == head_before


def test_a_broken_local_workspace_json_is_never_pushed(tmp_path: Path) -> None:
    """A hand edit that every other replica's intake would refuse stays local, and says so."""
    path, url = _remote(tmp_path, "path", None)
    a = _published(tmp_path, url)
    published = read(path, (b"workspace.json",))
    (a.root / "workspace.json").write_bytes(b'{"caps": "lots"}\n')
    with pytest.raises(SyncError, match=r"local workspace\.json is not valid workspace settings"):
        sync(a, options=FAST)
    assert read(path, (b"workspace.json",)) == published


@pytest.mark.parametrize(
    "name",
    [".git", ".GIT", ".Git", ".git.", ".git ", ".git. .", ".g\u200cit", "\ufeff.git", "GIT~1", "git~2"],
)
def test_every_git_folder_look_alike_is_refused(name: str) -> None:
    assert bad_name(name) == "has a component that names git's own folder (.git)"


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "a\\b", "x\x1b[2Jy", "log.", "log "])
def test_names_no_filesystem_takes_as_they_are_are_refused(name: str) -> None:
    assert bad_name(name) is not None


@pytest.mark.parametrize("name", ["workspace.json", "000001.jsonl", "app", "my-app.v2", "gitlab", ".github"])
def test_ordinary_names_pass(name: str) -> None:
    assert bad_name(name) is None


@pytest.mark.parametrize("mode", [0o120000, 0o160000, 0o100664, 0o000000, 0o040755])
def test_only_regular_files_and_trees_pass(mode: int) -> None:
    assert bad_mode(mode) is not None
    assert bad_mode(0o100644) is None and bad_mode(0o040000) is None


@pytest.mark.parametrize(
    "entries",
    [
        {(b"projects", b"app", b"log", b"\x1b[2J\x1b]0;owned\x07.jsonl"): (0o100644, b"")},
        {(b"workspace.json",): (0o100644, b'{"\\u001b[2Jcaps": 1}\n')},
    ],
    ids=["name", "settings-key"],
)
def test_a_refusal_never_prints_a_control_character(
    tmp_path: Path, entries: dict[tuple[bytes, ...], tuple[int, bytes]]
) -> None:
    path, url = _remote(tmp_path, "path", None)
    _published(tmp_path, url)
    forge(path, entries)
    with pytest.raises(RemoteRefused) as caught:
        clone(url, tmp_path / "c", FAST)
    message = str(caught.value)
    assert "\\x1b" in message and not any(ord(c) < 32 or ord(c) == 127 for c in message), message


@pytest.mark.parametrize("case", ["leaky-event", "dot", "symlink"])
def test_a_hostile_commit_under_a_clean_head_is_refused(tmp_path: Path, case: str) -> None:
    """The head hides nothing: a commit the fetch brings under it is checked too, since a
    sync with another remote would pass the whole history on."""
    path, url = _remote(tmp_path, "path", None)
    _published(tmp_path, url)
    victim = track(clone(url, tmp_path / "victim", FAST)[0])
    clean = {parts: (0o100644, read(path, parts)) for parts in hostile_trees(path)[case] if parts == SEGMENT}
    forge(path, hostile_trees(path)[case], "the attack")
    if clean:
        forge(path, clean, "hide it")
    else:
        forge(path, {}, "an empty commit on top")
        _undo_last_tree(path)
    local_head = victim.head()
    with pytest.raises(RemoteRefused) as caught:
        sync(victim, options=FAST)
    assert victim.head() == local_head
    attack = next(c for c in _history(path) if c[1] == "the attack")[0]
    assert f"commit {attack[:12]} under its main" in str(caught.value)
    assert "take it out of main's history" in str(caught.value)


def _history(remote: Path) -> list[tuple[str, str]]:
    from dulwich.repo import Repo

    with Repo(str(remote)) as repo:
        return [
            (e.commit.id.decode(), e.commit.message.decode().strip())
            for e in repo.get_walker(include=[repo.refs[b"refs/heads/main"]])
        ]


def _undo_last_tree(remote: Path) -> None:
    """Give main's commit its grandparent's tree: the forged entry is gone from the head."""
    from dulwich.objects import Commit
    from dulwich.repo import Repo

    with Repo(str(remote)) as repo:
        top = repo[repo.refs[b"refs/heads/main"]]
        assert isinstance(top, Commit)
        attack = repo[top.parents[0]]
        assert isinstance(attack, Commit)
        before = repo[attack.parents[0]]
        assert isinstance(before, Commit)
        top.tree = before.tree
        repo.object_store.add_object(top)
        repo.refs[b"refs/heads/main"] = top.id


def test_the_append_gate_holds_the_event_cap_the_intake_checks(tmp_path: Path) -> None:
    """An event no replica would take from a remote is never written locally either."""
    from service.core.errors import Invalid
    from service.core.events.events import MAX_EVENT_BYTES

    store = track(new_store(tmp_path / "s"))
    append(store, 1, text="x" * (MAX_EVENT_BYTES - 1000))
    before = store.head()
    with pytest.raises(Invalid, match="over the cap"):
        append(store, 1, text="x" * MAX_EVENT_BYTES)
    assert store.head() == before and len(store.read("app").events) == 1


def test_a_symlinked_segment_is_never_pushed(tmp_path: Path) -> None:
    """A sync reads local segments without following links: what a link points at outside
    the store never reaches the remote."""
    from service.adapters.store.errors import NotRegular

    path, url = _remote(tmp_path, "path", None)
    a = _published(tmp_path, url)
    outside = tmp_path / "outside.txt"
    outside.write_bytes((a.root / "projects/app/log/000000.jsonl").read_bytes() + b"private notes\n")
    segment = a.root / "projects/app/log/000000.jsonl"
    segment.unlink()
    segment.symlink_to(outside)
    remote_before = read(path, SEGMENT)
    with pytest.raises(NotRegular, match="symbolic link"):
        sync(a, options=FAST)
    assert read(path, SEGMENT) == remote_before


def test_a_checkout_writes_only_the_layout_even_past_the_gate(tmp_path: Path) -> None:
    """Defense in depth: a commit that reached `Store.checkout` without the intake gate still
    cannot write `.git/config` (a `.` component) or anything outside the layout."""
    store = track(new_store(tmp_path / "s"))
    forged_entries = {
        (b".", b".git", b"config"): (0o100644, b"[core]\n\tfsmonitor = touch pwned\n"),
        (b"notes.txt",): (0o100644, b"x\n"),
    }
    forge(store.root / ".git", forged_entries)
    config = (store.root / ".git" / "config").read_bytes()
    forged = store.repo.refs[b"refs/heads/main"]
    store.repo.refs[b"refs/heads/main"] = store.repo[forged].parents[0]
    store.checkout(forged.decode(), store.head())
    assert (store.root / ".git" / "config").read_bytes() == config
    assert not (store.root / "notes.txt").exists()
