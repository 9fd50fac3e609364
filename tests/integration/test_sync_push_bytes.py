"""A one-event push costs what changed: the new line and the changed tree entries, as deltas
against what the remote holds, not the tail segment it lands in (a thin pack, as `git push`
sends). Measured beside the git CLI pushing the same append, over real servers; the remote
stays valid for git itself (`git fsck`) and a fresh clone reads the event."""

from __future__ import annotations

import getpass
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.pack import apply_delta
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sync_ssh import SSHD, ssh_command
from test_sync_ssh import sshd as sshd  # the fixture, for the ssh case

from service.adapters.store import Store, gitcommit
from service.adapters.sync import Options, clone, remotes, sync
from service.adapters.sync.packing import affix_delta
from tests.support.servers import proxy
from tests.support.sync_support import (
    append,
    bare,
    files,
    git,
    git_daemon,
    http_git,
    new_store,
    remote_lines,
    status_clean,
    track,
)

USER, TOKEN = "alice", "tok-7a1c0e5d2b"
OPTIONS = Options(tries=8, timeout=10, pause=0.01, max_pause=0.05)


@pytest.fixture(params=["daemon", "http", "ssh"])
def served(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A URL template ("{name}" is the repository's file name) over a real git server for the
    bare repositories under tmp_path/served."""
    root = tmp_path / "served"
    root.mkdir()
    if request.param == "daemon":
        with git_daemon(root) as port:
            yield f"git://127.0.0.1:{port}/{{name}}"
    elif request.param == "http":
        monkeypatch.setenv("SELF_TOKEN", TOKEN)
        monkeypatch.setenv("SELF_GIT_USERNAME", USER)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
        with http_git(root, USER, TOKEN) as port:
            yield f"http://127.0.0.1:{port}/{{name}}"
    else:
        if not os.path.exists(SSHD) or not shutil.which("ssh"):
            pytest.skip("no sshd/ssh here; .ci/run installs openssh-server")
        port, folder = request.getfixturevalue("sshd")
        monkeypatch.setenv("SELF_SSH_COMMAND", ssh_command(folder, folder / "id"))
        yield f"ssh://{getpass.getuser()}@127.0.0.1:{port}{root}/{{name}}"


def git_push_bytes(tmp_path: Path, repo: Path, path: str, line: bytes) -> int:
    """The bytes `git push` sends (counted on the wire) to publish `line` appended to `path`."""
    work = tmp_path / "git-work"
    git("clone", "-q", "-b", "main", str(repo), str(work), cwd=tmp_path)
    target = work / path
    with open(target, "ab") as handle:
        handle.write(line)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "one more event", cwd=work)
    with git_daemon(repo.parent) as port, proxy(port) as (via, counter):
        git("push", "-q", f"git://127.0.0.1:{via}/{repo.name}", "main", cwd=work)
        return counter.sent


def fsck(repo: Path) -> None:
    git("fsck", "--full", "--strict", cwd=repo)  # raises on any error


@pytest.mark.parametrize("held", [990, 1000], ids=["tail-990", "fresh-segment"])
def test_a_one_event_push_sends_what_changed(tmp_path: Path, served: str, held: int) -> None:
    check_one_event_push(tmp_path, served, held)


@pytest.mark.slow  # 50,000 events, each validated again by the session's event check
def test_a_fresh_segment_of_a_long_log_sends_what_changed(tmp_path: Path) -> None:
    """50 full segments: their folder's tree alone is 2.3 kB, a delta of it one entry."""
    (tmp_path / "served").mkdir()
    with git_daemon(tmp_path / "served") as port:
        check_one_event_push(tmp_path, f"git://127.0.0.1:{port}/{{name}}", 50_000)


def check_one_event_push(tmp_path: Path, served: str, held: int) -> None:
    """`held` events in the app log, published; one more pushed by selfhub and, from the same
    start, by the git CLI: selfhub sends less than twice what git does, and the remote is sound."""
    remote = bare(tmp_path / "served" / "ws.git")
    a = new_store(tmp_path / "a")
    append(a, held)
    remotes.add(a.repo, served.format(name="ws.git"))
    assert sync(a, options=OPTIONS).created
    shutil.copytree(remote, tmp_path / "served" / "same.git")  # the same start for the git CLI

    [event] = append(a, 1)
    summary = sync(a, options=OPTIONS)
    assert summary.pushed == 1

    segments = sorted((a.root / "projects/app/log").glob("*.jsonl"))
    assert len(segments) == held // 1000 + 1  # the tail holds 990 events, or the new one alone
    line = segments[-1].read_bytes().splitlines(keepends=True)[-1]
    assert event.id.encode() in line
    git_sent = git_push_bytes(
        tmp_path, tmp_path / "served" / "same.git", str(segments[-1].relative_to(a.root)), line
    )
    assert summary.bytes_sent < 2 * git_sent, (summary.bytes_sent, git_sent)

    fsck(remote)
    assert line in remote_lines(remote)
    checkout = tmp_path / "checkout"
    git("clone", "-q", "-b", "main", str(remote), str(checkout), cwd=tmp_path)
    assert {p: data for p, data in files(a).items()} == {
        str(p.relative_to(checkout)): p.read_bytes()
        for p in sorted(checkout.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(checkout).parts
    }
    b, _ = clone(served.format(name="ws.git"), tmp_path / "b", OPTIONS)
    assert event.id in {e.id for e in track(b).read("app").events}


def test_a_path_remote_takes_whole_objects(tmp_path: Path) -> None:
    """A path remote is written in-process: the pack is stored as it is, so no deltas."""
    remote = bare(tmp_path / "remote.git")
    a = new_store(tmp_path / "a")
    append(a, 990)
    remotes.add(a.repo, str(remote))
    sync(a, options=OPTIONS)
    [event] = append(a, 1)
    assert sync(a, options=OPTIONS).pushed == 1
    fsck(remote)
    b, _ = clone(str(remote), tmp_path / "b", OPTIONS)
    assert event.id in {e.id for e in track(b).read("app").events}


def tree_of(repo: Path) -> str:
    return git("rev-parse", "main^{tree}", cwd=repo).strip()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=st.lists(st.integers(0, 1300), min_size=1, max_size=2),
    rounds=st.lists(st.lists(st.integers(0, 1200), min_size=1, max_size=2), min_size=1, max_size=3),
)
def test_pushed_remote_equals_the_local_tree(
    tmp_path_factory: pytest.TempPathFactory, start: list[int], rounds: list[list[int]]
) -> None:
    """Random logs, random appends: after each sync the remote's tree is the local one, and git
    finds the remote repository sound."""
    tmp = tmp_path_factory.mktemp("prop")
    (tmp / "served").mkdir()
    remote = bare(tmp / "served" / "ws.git")
    projects = [f"p{k}" for k in range(len(start))]
    a = new_store(tmp / "a", projects[0])
    _add_projects(a, projects[1:])
    for project, count in zip(projects, start, strict=True):
        if count:
            append(a, count, log=project)
    with git_daemon(tmp / "served") as port:
        remotes.add(a.repo, f"git://127.0.0.1:{port}/ws.git")
        sync(a, options=OPTIONS)
        for appends in rounds:
            for project, count in zip(projects, appends, strict=False):
                if count:
                    append(a, count, log=project, text="more")
            sync(a, options=OPTIONS)
            head = gitcommit.head(a.repo)
            assert head is not None
            assert git("rev-parse", "main", cwd=remote).strip() == head.decode()
            fsck(remote)
            local_tree = a.repo[head].tree.decode()  # type: ignore[attr-defined]
            assert tree_of(remote) == local_tree
            assert status_clean(a)  # the working files are that tree


def _add_projects(store: Store, slugs: list[str]) -> None:
    from service.core.events.events import ProjectAdded, make
    from tests.support.sync_support import ORIGIN, TS

    with store.transaction("") as tx:
        tx.append(
            [
                make(i, TS, "project.added", ORIGIN, "", ProjectAdded(s, "more"))
                for s, i in zip(slugs, tx.next_ids(len(slugs)), strict=True)
            ]
        )


@settings(max_examples=300, deadline=None)
@given(
    shared=st.binary(max_size=300),
    base_end=st.binary(max_size=200),
    target_end=st.binary(max_size=200),
    big=st.booleans(),
)
def test_an_affix_delta_rebuilds_the_target(
    shared: bytes, base_end: bytes, target_end: bytes, big: bool
) -> None:
    """Decoded by dulwich's delta decoder, the delta gives the target back, also past the
    64 KiB a single copy can hold."""
    if big:
        shared *= 70_000 // max(1, len(shared)) + 1
    for base, target in [(shared + base_end, shared + target_end), (base_end + shared, target_end + shared)]:
        assert b"".join(apply_delta(base, affix_delta(base, target))) == target
