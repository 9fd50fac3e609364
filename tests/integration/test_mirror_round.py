"""A sync run on a live workspace (`service/server/mirror/round.py`) against a real bare remote: the
states it leaves equal a refold of the store from nothing, whether the fetch only appended
(folded in memory) or put fetched events before local ones (folded again through the cache),
and the stream gets exactly the events the sync brought, each once. A round fetches once: the
sync starts from the head its prefetch brought, still through the intake gate, and pushes
with compare-and-swap against that head."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec
import pytest
from dulwich.objects import ObjectID

from service.adapters.store import Store
from service.adapters.sync import remotes, sync
from service.adapters.sync.engine import Fetched
from service.adapters.sync.intake import RemoteRefused
from service.adapters.sync.prefetch import prefetch
from service.adapters.sync.transport import MAIN
from service.server.live.space import LiveWorkspace, Quiet
from service.server.live.writer import Writer
from service.server.mirror.round import sync_live
from tests.support.forge import forge, head, hostile_trees
from tests.support.servers import Counter, proxy
from tests.support.sync_support import (
    FAST,
    append,
    bare,
    close_all,
    event_ids,
    git_daemon,
    pair,
    replica,
)


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    yield
    close_all()


def states(live: LiveWorkspace) -> dict[str, bytes]:
    return {log: msgspec.json.encode(live.state(log)[0], order="sorted") for log in live.store.logs()}


def refolded(live: LiveWorkspace) -> dict[str, bytes]:
    return {log: msgspec.json.encode(live.store.refold(log)[0], order="sorted") for log in live.store.logs()}


@pytest.mark.parametrize("seed", range(4))
def test_the_states_after_a_sync_are_a_refold(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    _, a, b = pair(tmp_path)
    live = LiveWorkspace("b", b, Quiet(), Writer)
    try:
        streamed: list[str] = []
        for step in range(6):
            pushed = append(a, rng.randint(1, 30), text=f"from a {step}") if rng.random() < 0.8 else []
            sync(a, options=FAST)
            local = []
            if rng.random() < 0.5:  # b wrote too (as the service's writer would have): a rebase
                local = append(b, rng.randint(1, 5), text=f"from b {step}")
                live.load()
            mark = live.feed.end()
            with b.locked():
                summary = sync_live(live, FAST)
            found = live.feed.since(mark)
            assert found is not None
            got = [e.id for _, e in found]
            assert sorted(got) == sorted(e.id for e in pushed), "the stream gets what the sync brought"
            assert summary.pushed == len(local)
            streamed += got
            assert live.head == b.head()
            assert states(live) == refolded(live), f"step {step}"
        assert len(streamed) == len(set(streamed)), "each event streamed once"
    finally:
        live.close()


@contextmanager
def counted_remote(tmp_path: Path) -> Iterator[tuple[Store, Store, Counter]]:
    """Replica a (direct) and replica b (through a counting proxy) of one bare repository
    under `git daemon`: b's connections to the remote are counted (a fetch or a push, one each)."""
    base = tmp_path / "git"
    base.mkdir()
    bare(base / "remote.git")
    with git_daemon(base) as port, proxy(port) as (via, counter):
        a = replica(tmp_path, "a", f"git://127.0.0.1:{port}/remote.git")
        b = replica(tmp_path, "b", f"git://127.0.0.1:{via}/remote.git", seed=a)
        yield a, b, counter


@pytest.mark.parametrize("local", [0, 3])
def test_a_round_fetches_once(tmp_path: Path, local: int) -> None:
    """The sync on the writer starts from the head the prefetch brought: no second fetch, a
    push only when there is something to push."""
    with counted_remote(tmp_path) as (a, b, counter):
        live = LiveWorkspace("b", b, Quiet(), Writer)
        try:
            pushed = append(a, 5, text="from a")
            sync(a, options=FAST)
            mine = append(b, local, text="from b") if local else []
            live.load()
            mark = live.feed.end()
            counter.reset()
            fetched = prefetch(b.root, remotes.DEFAULT, FAST)
            assert counter.connections == 1 and fetched.head == a.repo.refs[MAIN]
            with b.locked():
                summary = sync_live(live, FAST, fetched)
            assert counter.connections == (2 if local else 1), "one fetch, and a push of b's events"
            assert summary.pulled == 5 and summary.pushed == local and summary.retries == 0
            assert summary.bytes_received >= fetched.received > 0
            found = live.feed.since(mark)
            assert found is not None and sorted(e.id for _, e in found) == sorted(e.id for e in pushed)
            assert states(live) == refolded(live)
            sync(a, options=FAST)
            assert a.head() == b.head() == live.head
            assert {e.id for e in mine} <= set(event_ids(a))
        finally:
            live.close()


def test_a_remote_that_moved_after_the_prefetch_is_fetched_again(tmp_path: Path) -> None:
    """The push's compare-and-swap is against the prefetched head: a push landing in between
    turns it away, and the retry fetches."""
    path, a, b = pair(tmp_path)
    live = LiveWorkspace("b", b, Quiet(), Writer)
    try:
        append(a, 2, text="before the prefetch")
        sync(a, options=FAST)
        fetched = prefetch(b.root, remotes.DEFAULT, FAST)
        later = append(a, 3, text="after the prefetch")
        sync(a, options=FAST)
        mine = append(b, 2, text="from b")
        live.load()
        with b.locked():
            summary = sync_live(live, FAST, fetched)
        assert summary.retries == 1 and summary.pushed == 2
        assert b.head() == head(path).decode() == live.head
        assert {e.id for e in later + mine} <= set(event_ids(b))
        assert states(live) == refolded(live)
    finally:
        live.close()


def test_what_the_prefetch_brought_passes_the_intake_gate(tmp_path: Path) -> None:
    path, a, b = pair(tmp_path)
    live = LiveWorkspace("b", b, Quiet(), Writer)
    try:
        append(a, 2)
        sync(a, options=FAST)
        forge(path, hostile_trees(path)["symlink"])
        before = b.head()
        fetched = prefetch(b.root, remotes.DEFAULT, FAST)
        with b.locked(), pytest.raises(RemoteRefused, match="symbolic link"):
            sync_live(live, FAST, fetched)
        assert b.head() == before == live.head
    finally:
        live.close()


def test_a_prefetch_of_another_url_or_without_its_objects_is_not_used(tmp_path: Path) -> None:
    path, a, b = pair(tmp_path)
    append(a, 2)
    sync(a, options=FAST)
    remote = head(path)
    for fetched in (
        Fetched("/elsewhere.git", remote),  # the remote's URL changed since
        Fetched(str(path), ObjectID(b"1" * 40)),  # a head whose objects are not in the store
    ):
        summary = sync(b, options=FAST, fetched=fetched)
        assert summary.head == remote.decode() and summary.pulled in (0, 2)
    assert b.head() == remote.decode()


@pytest.mark.parametrize("local", [0, 2])
def test_a_prefetch_older_than_the_last_sync_is_not_pushed_over(tmp_path: Path, local: int) -> None:
    """A prefetch the store's own sync overtook (a `--replicated` batch pushed meanwhile) names
    a head the backend has left: the round neither rebases onto it nor pushes over it. With
    main where the last sync left it the round does nothing; with local events it fetches
    again and pushes them once, without a rejected push."""
    with counted_remote(tmp_path) as (a, b, counter):
        live = LiveWorkspace("b", b, Quiet(), Writer)
        try:
            fetched = prefetch(b.root, remotes.DEFAULT, FAST)  # the backend as it was
            append(b, 3, text="pushed by b's writer")
            sync(b, options=FAST)  # overtakes the prefetch
            mine = append(b, local, text="not pushed yet") if local else []
            live.load()
            counter.reset()
            with b.locked():
                summary = sync_live(live, FAST, fetched)
            assert summary.retries == 0 and summary.pushed == local
            assert counter.connections == (2 if local else 0), "a fetch and a push, or nothing"
            sync(a, options=FAST)
            assert a.head() == b.head() == live.head
            assert {e.id for e in mine} <= set(event_ids(a))
        finally:
            live.close()
