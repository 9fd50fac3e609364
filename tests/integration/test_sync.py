"""Sync against real git remotes: a bare repository by path and file://, and `git daemon`."""

from __future__ import annotations

import collections
import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from dulwich.repo import Repo

from service.adapters.store import Store, gitcommit, layout
from service.adapters.store.clock import high_water
from service.adapters.sync import (
    NotSelfhub,
    Options,
    SyncError,
    Unreachable,
    clone,
    remembered,
    remotes,
    sync,
)
from service.adapters.sync.remembered import last_synced
from tests.support.sync_support import (
    FAST,
    append,
    bare,
    event_ids,
    files,
    free_port,
    git,
    git_daemon,
    new_store,
    pair,
    remote_ids,
    replica,
    same,
    status_clean,
    track,
)


@pytest.fixture(scope="module")
def daemon_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    base = tmp_path_factory.mktemp("daemon")
    with git_daemon(base) as port:
        yield base, port


@pytest.fixture(params=["path", "file", "daemon"])
def remote(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    """A fresh bare repository and the URL to reach it by."""
    if request.param == "daemon":
        base, port = request.getfixturevalue("daemon_base")
        name = f"r{time.monotonic_ns()}.git"
        path = bare(base / name)
        return path, f"git://127.0.0.1:{port}/{name}"
    path = bare(tmp_path / "remote.git")
    return path, str(path) if request.param == "path" else f"file://{path}"


# --- remotes ----------------------------------------------------------------------------------------


def test_remotes_live_in_git_config(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a")
    stored = remotes.add(store.repo, str(tmp_path / "r.git"))
    assert stored == str(tmp_path / "r.git")
    remotes.add(store.repo, "git://127.0.0.1:9/x.git", "backup")
    assert remotes.listed(store.repo) == [
        {"name": "backup", "url": "git://127.0.0.1:9/x.git"},
        {"name": "origin", "url": stored},
    ]
    assert git("config", "remote.origin.url", cwd=store.root).strip() == stored
    with pytest.raises(SyncError, match="exists already"):
        remotes.add(store.repo, "git://127.0.0.1:9/y.git", "backup")
    assert remotes.remove(store.repo, "backup") == "git://127.0.0.1:9/x.git"
    assert [r["name"] for r in remotes.listed(store.repo)] == ["origin"]
    with pytest.raises(SyncError, match="no remote named 'backup'"):
        remotes.url_of(store.repo, "backup")
    with pytest.raises(SyncError, match="not a remote name"):
        remotes.add(store.repo, "git://h/x", "../evil")


def test_a_token_in_the_url_is_refused_and_not_echoed(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a")
    with pytest.raises(SyncError) as caught:
        remotes.add(store.repo, "https://alice:s3cr3t-token@git.example/team/ws.git")
    assert "s3cr3t-token" not in str(caught.value)
    assert "SELF_TOKEN" in str(caught.value)
    assert b"s3cr3t" not in (store.root / ".git" / "config").read_bytes()


# --- the protocol -----------------------------------------------------------------------------------


def test_two_replicas_converge(tmp_path: Path, remote: tuple[Path, str]) -> None:
    path, url = remote
    a = replica(tmp_path, "a", url)
    b = replica(tmp_path, "b", url, seed=a)
    same(a, b)
    mine = append(a, 3, text="from a")
    first = sync(a, options=FAST)
    assert (first.pushed, first.pulled, first.retries) == (3, 0, 0)
    theirs = append(b, 2, text="from b")
    second = sync(b, options=FAST)
    assert (second.pushed, second.pulled) == (2, 3)
    third = sync(a, options=FAST)
    assert (third.pushed, third.pulled) == (0, 2)
    same(a, b)
    ids = event_ids(a)
    assert sorted(ids) == sorted(set(ids)), "an event is present twice"
    assert {e.id for e in mine + theirs} <= set(ids)
    assert sorted(remote_ids(path)) == sorted(ids)
    for store in (a, b):
        assert store.head() == third.head == second.head
        assert status_clean(store), "the index or the working files disagree with main"
        assert high_water(store.clock_file) >= max(ids)
        assert last_synced(store, "origin") == store.head()


def test_an_empty_remote_gets_the_local_history(tmp_path: Path) -> None:
    path = bare(tmp_path / "remote.git")
    a = new_store(tmp_path / "a")
    append(a, 4)
    local_head = a.head()
    remotes.add(a.repo, str(path))
    summary = sync(a, options=FAST)
    assert summary.created and summary.pushed == 5 and summary.head == local_head
    assert git("rev-parse", "main", cwd=path).strip() == local_head
    again = sync(a, options=FAST)
    assert (again.created, again.pushed, again.pulled, again.head) == (False, 0, 0, local_head)


def test_a_push_race_is_retried_and_keeps_both_events(tmp_path: Path, remote: tuple[Path, str]) -> None:
    path, url = remote
    a = replica(tmp_path, "a", url)
    b = replica(tmp_path, "b", url, seed=a)
    append(a, 1, text="a wins the race")
    append(b, 1, text="b loses the race")
    raced = []

    def race(point: str) -> None:
        if point == "committed" and not raced:  # b has committed on the head it fetched
            raced.append(sync(a, options=FAST))  # a pushes first

    summary = sync(b, options=Options(tries=8, timeout=5, pause=0.01, max_pause=0.05, hook=race))
    assert summary.retries == 1 and summary.pushed == 1
    sync(a, options=FAST)
    same(a, b)
    ids = remote_ids(path)
    assert len(ids) == len(set(ids)) == 3  # project.added + one event from each


def test_crash_between_commit_and_push_loses_nothing(tmp_path: Path) -> None:
    _, a, b = pair(tmp_path)
    mine = append(a, 2)

    def crash(point: str) -> None:
        if point == "committed":
            raise KeyboardInterrupt("power cut")

    with pytest.raises(KeyboardInterrupt):
        sync(a, options=Options(hook=crash))
    reopened = track(Store.open(a.root))
    assert status_clean(reopened)
    assert {e.id for e in mine} <= set(event_ids(reopened))
    append(b, 1)
    sync(b, options=FAST)
    summary = sync(reopened, options=FAST)
    assert summary.pushed == 2 and summary.pulled == 1
    sync(b, options=FAST)
    same(reopened, b)


def test_crash_in_the_middle_of_a_checkout_is_finished_on_open(tmp_path: Path) -> None:
    _, a, b = pair(tmp_path)
    append(b, 5)
    sync(b, options=FAST)
    from service.adapters.store import store as store_module

    real = store_module.Store._materialize

    def dies(self: Store, commit: bytes) -> list[str]:
        raise OSError("disk gone")

    store_module.Store._materialize = dies  # type: ignore[method-assign]
    try:
        with pytest.raises(OSError):
            sync(a, options=FAST)
    finally:
        store_module.Store._materialize = real  # type: ignore[method-assign]
    assert (a.local_dir / "checkout").exists()
    reopened = track(Store.open(a.root))
    assert not (a.local_dir / "checkout").exists()
    assert status_clean(reopened)
    same(reopened, b)


def test_not_a_selfhub_remote_is_refused(tmp_path: Path) -> None:
    work = tmp_path / "other"
    git("init", "-q", "-b", "main", str(work))
    (work / "README.md").write_text("not a workspace\n")
    git("add", "README.md", cwd=work)
    git("commit", "-q", "-m", "readme", cwd=work)
    path = bare(tmp_path / "remote.git")
    git("push", "-q", str(path), "main", cwd=work)
    a = new_store(tmp_path / "a")
    append(a, 2)
    before, head = files(a), a.head()
    remotes.add(a.repo, str(path))
    with pytest.raises(NotSelfhub, match="not a selfhub workspace"):
        sync(a, options=FAST)
    assert files(a) == before and a.head() == head
    with pytest.raises(NotSelfhub):
        clone(str(path), tmp_path / "c", FAST)
    assert not (tmp_path / "c").exists()


def test_malformed_remote_lines_are_carried_and_quarantined(tmp_path: Path) -> None:
    path = bare(tmp_path / "remote.git")
    a = replica(tmp_path, "a", str(path))
    append(a, 2)
    sync(a, options=FAST)
    work = tmp_path / "plain"
    git("clone", "-q", "-b", "main", str(path), str(work))
    segment = work / "projects" / "app" / "log" / "000000.jsonl"
    with open(segment, "ab") as handle:
        handle.write(b"{this is not json\n")
    git("commit", "-q", "-am", "a hand edit", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    b = replica(tmp_path, "b", str(path), seed=a)
    append(a, 1)
    summary = sync(a, options=FAST)
    assert summary.quarantined == 1 and summary.pushed == 1
    _, bad = a.state("app")
    assert [q.line for q in bad] == [3]
    sync(b, options=FAST)
    same(a, b)
    assert b"{this is not json\n" in (a.root / "projects/app/log/000000.jsonl").read_bytes()


def test_a_rewritten_remote_is_detected_and_lost_events_come_back(tmp_path: Path) -> None:
    path = bare(tmp_path / "remote.git")
    a = replica(tmp_path, "a", str(path))
    early = git("rev-parse", "main", cwd=path).strip()
    b = replica(tmp_path, "b", str(path), seed=a)
    published = append(a, 3)
    sync(a, options=FAST)
    sync(b, options=FAST)
    git("update-ref", "refs/heads/main", early, cwd=path)  # someone force-pushes an old head
    summary = sync(b, options=FAST)
    assert summary.rewritten and summary.restored == 3 and summary.pushed == 3
    assert {e.id for e in published} <= set(remote_ids(path))
    sync(a, options=FAST)
    same(a, b)
    ids = remote_ids(path)
    assert len(ids) == len(set(ids)) == 4


def test_a_wiped_remote_is_republished(tmp_path: Path) -> None:
    path = bare(tmp_path / "remote.git")
    a = replica(tmp_path, "a", str(path))
    append(a, 2)
    sync(a, options=FAST)
    git("update-ref", "-d", "refs/heads/main", cwd=path)
    summary = sync(a, options=FAST)
    assert summary.created and summary.rewritten
    assert len(remote_ids(path)) == 3


def test_non_append_changes_reach_the_caches(tmp_path: Path) -> None:
    """A sync that puts remote events before local ones rewrites the tail of a segment: the
    fold cache and the hot slice must notice (by digest), not fold on top of stale bytes."""
    _, a, b = pair(tmp_path)
    append(a, 30, text="a")
    append(b, 30, text="b")
    sync(b, options=FAST)
    for store in (a, b):  # warm every cache on the pre-sync bytes
        store.state("app")
        store.hot("app")
    old = (a.root / "projects/app/log/000000.jsonl").read_bytes()
    sync(a, options=FAST)
    new = (a.root / "projects/app/log/000000.jsonl").read_bytes()
    assert not new.startswith(old), "the test needs a change that is not an append"
    sync(b, options=FAST)
    same(a, b)
    for store in (a, b):
        whole, _ = store.refold("app")
        assert store.hot("app").ids() == sorted(whole.entities)


def test_the_caches_follow_when_the_cache_is_not_dropped(tmp_path: Path) -> None:
    """The same with the explicit drop disabled: the caches' own digest checks catch it."""
    from service.adapters.store import cache

    _, a, b = pair(tmp_path)
    append(a, 30, text="a")
    append(b, 30, text="b")
    sync(b, options=FAST)
    a.state("app")
    a.hot("app")
    real = cache.drop
    cache.drop = lambda root, log: None  # type: ignore[assignment]
    try:
        sync(a, options=FAST)
    finally:
        cache.drop = real  # type: ignore[assignment]
    whole, _ = a.refold("app")
    assert a.state("app")[0] == whole
    assert a.hot("app").ids() == sorted(whole.entities)


def test_a_push_sends_the_last_segment_not_the_log(tmp_path: Path) -> None:
    from service.adapters.sync.packing import new_objects

    url = str(bare(tmp_path / "remote.git"))
    a = replica(tmp_path, "a", url)
    append(a, 2500)
    sync(a, options=FAST)
    parent = a.repo.refs[gitcommit.BRANCH]
    append(a, 1)
    sync(a, options=FAST)
    head = a.repo.refs[gitcommit.BRANCH]
    objects = [obj for obj, _ in new_objects(a.repo, head, parent)]
    blobs = [o for o in objects if o.type_name == b"blob"]
    assert len(blobs) == 1
    assert len(blobs[0].as_raw_string()) == len((a.root / "projects/app/log/000002.jsonl").read_bytes())
    assert sorted(layout.segments(a.root, "app")) == ["000000.jsonl", "000001.jsonl", "000002.jsonl"]


def test_workspace_settings_travel(tmp_path: Path) -> None:
    _, a, b = pair(tmp_path)
    import msgspec

    a.save_config(msgspec.structs.replace(a.config(), tokens_per_char=0.5))
    assert sync(a, options=FAST).config == "pushed"
    assert sync(b, options=FAST).config == "pulled"
    assert b.config().tokens_per_char == 0.5
    same(a, b)


# --- clone --------------------------------------------------------------------------------------


def test_clone_makes_a_working_store(tmp_path: Path, remote: tuple[Path, str]) -> None:
    _, url = remote
    a = replica(tmp_path, "a", url)
    append(a, 1200)
    sync(a, options=FAST)
    b, summary = clone(url, tmp_path / "b", FAST)
    track(b)
    assert summary.pulled == 1201
    same(a, b)
    assert status_clean(b)
    assert remotes.listed(b.repo) == [{"name": "origin", "url": url}]
    assert high_water(b.clock_file) == max(event_ids(a))
    assert ".local/" in (b.root / ".git" / "info" / "exclude").read_text()


def test_clone_of_an_empty_remote_is_refused(tmp_path: Path) -> None:
    path = bare(tmp_path / "remote.git")
    with pytest.raises(SyncError, match="is empty"):
        clone(str(path), tmp_path / "c", FAST)
    assert not (tmp_path / "c").exists()


# --- unreachable remotes --------------------------------------------------------------------------


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """Accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()


def untouched(store: Store, action: Callable[[], object]) -> None:
    before = (files(store), store.head(), sorted(os.listdir(store.root / ".git" / "objects")))
    action()
    after = (files(store), store.head(), sorted(os.listdir(store.root / ".git" / "objects")))
    assert before == after


def test_an_unreachable_remote_fails_fast_and_clearly(tmp_path: Path) -> None:
    a = new_store(tmp_path / "a")
    append(a, 1)
    port = free_port()  # nothing listens there
    remotes.add(a.repo, f"git://127.0.0.1:{port}/ws.git")

    def attempt() -> None:
        with pytest.raises(Unreachable, match="untouched") as caught:
            sync(a, options=FAST)
        assert f"127.0.0.1:{port}" in str(caught.value)

    untouched(a, attempt)


def test_a_silent_remote_times_out_on_its_own_connection(tmp_path: Path) -> None:
    a = new_store(tmp_path / "a")
    process_default = socket.getdefaulttimeout()
    socket.setdefaulttimeout(120.0)  # the connection must not take it, nor change it
    try:
        with silent_server() as port:
            remotes.add(a.repo, f"git://127.0.0.1:{port}/ws.git")
            started = time.monotonic()

            def attempt() -> None:
                with pytest.raises(Unreachable, match=r"no answer within 0\.5 s"):
                    sync(a, options=Options(timeout=0.5))

            untouched(a, attempt)
            assert time.monotonic() - started < 5
            with pytest.raises(Unreachable, match=r"no answer within 0\.5 s"):
                clone(f"git://127.0.0.1:{port}/ws.git", tmp_path / "b", Options(timeout=0.5))
            assert not (tmp_path / "b").exists()
            assert socket.getdefaulttimeout() == 120.0
    finally:
        socket.setdefaulttimeout(process_default)


def test_a_waiting_connection_leaves_the_process_default_timeout_alone(tmp_path: Path) -> None:
    a = new_store(tmp_path / "a")
    with silent_server() as port:
        remotes.add(a.repo, f"git://127.0.0.1:{port}/ws.git")
        failed: list[BaseException] = []

        def attempt() -> None:
            try:
                sync(a, options=Options(timeout=1))
            except Unreachable as exc:
                failed.append(exc)

        worker = threading.Thread(target=attempt)
        before, seen = socket.getdefaulttimeout(), set()
        worker.start()
        while worker.is_alive():  # the whole time the sync waits for an answer
            seen.add(socket.getdefaulttimeout())
            time.sleep(0.005)
        worker.join()
    assert failed and seen == {before}


def test_a_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    a = new_store(tmp_path / "a")
    remotes.add(a.repo, str(tmp_path / "nowhere.git"))
    with pytest.raises(Unreachable, match="does not exist"):
        sync(a, options=FAST)


# --- many replicas, one remote ---------------------------------------------------------------------


def test_five_replicas_in_threads_converge(tmp_path: Path, daemon_base: tuple[Path, int]) -> None:
    base, port = daemon_base
    bare(base / "threads.git")
    url = f"git://127.0.0.1:{port}/threads.git"
    first = replica(tmp_path, "r0", url)
    stores = [first] + [replica(tmp_path, f"r{n}", url, seed=first) for n in range(1, 5)]
    written: list[str] = []
    retries = collections.Counter[int]()
    errors: list[BaseException] = []

    def work(n: int, store: Store) -> None:
        try:
            for _ in range(4):
                written.extend(e.id for e in append(store, 3, text=f"r{n}"))
                retries[n] += sync(
                    store, options=Options(tries=30, timeout=10, pause=0.01, max_pause=0.2)
                ).retries
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n, s)) for n, s in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    for store in stores:
        sync(store, options=FAST)
    for store in stores:
        sync(store, options=FAST)
    same(*stores)
    ids = remote_ids(base / "threads.git")
    assert len(ids) == len(set(ids)) == len(written) + 1
    assert set(written) <= set(ids)
    with Repo(str(base / "threads.git")) as published:
        assert published.refs[b"refs/heads/main"] == stores[0].repo.refs[b"refs/heads/main"]


@pytest.mark.parametrize(
    ("most", "rounds"),
    [
        pytest.param(4, 10, id="at-most-4"),  # the same merge, past a bound the fast suite reaches
        pytest.param(remembered.MAX_PACKS, 40, marks=pytest.mark.slow, id="as-shipped"),
    ],
)
def test_packs_stay_few_however_often_a_store_syncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, most: int, rounds: int
) -> None:
    tidy = remembered.tidy_packs
    monkeypatch.setattr(remembered, "tidy_packs", lambda repo: tidy(repo, most))
    _, a, b = pair(tmp_path)
    for _ in range(rounds):
        append(a, 1)
        sync(a, options=FAST)
        sync(b, options=FAST)
    packs = list((b.root / ".git" / "objects" / "pack").glob("*.pack"))
    assert len(packs) <= most < rounds
    same(a, b)
    assert status_clean(b)
    assert git("fsck", "--no-dangling", cwd=b.root) == ""


def test_a_declined_push_moves_no_tracking_ref(tmp_path: Path) -> None:
    """dulwich's porcelain moves refs/remotes/... even when the server declines a push; the
    sync never trusts it: after a push that lost every try, the tracking ref and the record of
    the last sync still name the remote's real head, and the events wait locally."""
    path, a, b = pair(tmp_path)
    before = last_synced(b, "origin")
    mine = append(b, 1, text="b")

    def race(point: str) -> None:
        if point == "committed":  # someone else pushes before every one of b's pushes
            append(a, 1)
            sync(a, options=FAST)

    with pytest.raises(SyncError, match="kept moving"):
        sync(b, options=Options(tries=2, timeout=5, pause=0.01, max_pause=0.02, hook=race))
    tracking = b.repo.refs[b"refs/remotes/origin/main"]
    assert tracking.decode() == before == last_synced(b, "origin")
    assert tracking != b.repo.refs[gitcommit.BRANCH]
    assert git("rev-parse", "main", cwd=path).strip() != b.head()
    summary = sync(b, options=FAST)
    assert summary.pushed == 1 and mine[0].id in remote_ids(path)
