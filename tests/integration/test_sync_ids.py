"""Ids across replicas whose clocks disagree, and events a remote holds in other bytes.

Every replica is a real store and the remote a real bare repository; clock skew is the
store's documented offset (SELF_CLOCK_OFFSET_MS), set per replica around what it does.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from service.adapters.store import Store
from service.adapters.store.clock import high_water
from service.adapters.store.errors import StoreError
from service.adapters.sync import SyncError, clone, doctor, sync
from service.adapters.sync.every import sync_every
from service.core.events import ids
from service.core.events.events import Assertion, Event, canonical, make
from tests.support.sync_support import (
    FAST,
    ORIGIN,
    TS,
    append,
    bare,
    clock_offset,
    event_lines,
    files,
    git,
    new_store,
    remote_lines,
    replica,
    same,
)

DAY_MS = 24 * 3600 * 1000


def write(store: Store, event_id: str, text: str, log: str = "app") -> Event:
    """One event with the id given (what a writer with that clock would have minted)."""
    event = make(event_id, TS, "entity.proposed", ORIGIN, log, Assertion(entity=event_id, text=text))
    with store.transaction(log) as tx:
        tx.append([event])
    return event


def at(ms: int, random80: int = 0) -> str:
    return ids.encode((ms << 80) | random80)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def edit_on_remote(tmp_path: Path, remote: Path, old: bytes, new: bytes) -> None:
    """Someone changes an event's bytes on the remote with plain git."""
    work = tmp_path / f"plain{time.monotonic_ns()}"
    git("clone", "-q", "-b", "main", str(remote), str(work))
    segment = work / "projects" / "app" / "log" / "000000.jsonl"
    data = segment.read_bytes()
    assert old in data
    segment.write_bytes(data.replace(old, new))
    git("commit", "-q", "-am", "an edit by hand", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)


# --- item: ids collide across replicas under clock skew ------------------------------------


def test_replicas_behind_a_fast_clock_lose_no_event(tmp_path: Path) -> None:
    """One clock 5 s ahead writes and syncs; two correct clocks fetch it and write 2 each."""
    path = bare(tmp_path / "remote.git")
    fast = replica(tmp_path, "fast", str(path))
    b = replica(tmp_path, "b", str(path), seed=fast)
    c = replica(tmp_path, "c", str(path), seed=fast)
    with clock_offset(5000):
        written = append(fast, 1, text="from the fast clock")
        sync(fast, options=FAST)
    sync(b, options=FAST)
    sync(c, options=FAST)
    written += append(b, 2, text="from b")
    written += append(c, 2, text="from c")
    assert len({e.id for e in written}) == 5, "two writers minted the same id"
    summaries = []
    for store in (fast, b, c, fast, b, c):
        with clock_offset(5000 if store is fast else 0):
            summaries.append(sync(store, options=FAST))
    assert summaries[2].pushed == 2, "c's events were not published"
    on_remote = remote_lines(path)
    for event in written:
        assert on_remote.count(canonical(event)) == 1, f"{event.id} is not on the remote exactly once"
    for store in (fast, b, c):
        assert all(event_lines(store).count(canonical(e)) == 1 for e in written)
    same(fast, b, c)


def test_a_remote_id_far_ahead_is_refused_and_moves_no_clock(tmp_path: Path) -> None:
    """The greatest id there is: taken, it would make every replica mint the same ids."""
    path = bare(tmp_path / "remote.git")
    a = replica(tmp_path, "a", str(path))
    b = replica(tmp_path, "b", str(path), seed=a)
    far = "7zzzzzzzzzzzzzzzzzzzzzzzzz"
    write(a, far, "from the end of time")
    sync(a, options=FAST)
    before, head, mark = files(b), b.head(), high_water(b.clock_file)
    with pytest.raises(SyncError, match="origin") as refused:
        sync(b, options=FAST)
    assert far in str(refused.value) and "24 h" in str(refused.value)
    assert (files(b), b.head(), high_water(b.clock_file)) == (before, head, mark)
    with pytest.raises(SyncError, match=far):
        clone(str(path), tmp_path / "c", FAST)
    assert not (tmp_path / "c").exists()


def test_a_remote_id_two_days_ahead_is_refused_one_hour_is_taken(tmp_path: Path) -> None:
    path = bare(tmp_path / "remote.git")
    a = replica(tmp_path, "a", str(path))
    b = replica(tmp_path, "b", str(path), seed=a)
    soon = write(a, at(now_ms() + 3600 * 1000), "an hour ahead")
    sync(a, options=FAST)
    assert sync(b, options=FAST).pulled == 1
    assert high_water(b.clock_file) == soon.id  # within the horizon: the clock moves past it
    late = at(now_ms() + 2 * DAY_MS)
    write(a, late, "two days ahead")
    sync(a, options=FAST)
    with pytest.raises(SyncError, match=late):
        sync(b, options=FAST)
    assert high_water(b.clock_file) == soon.id


def test_the_same_id_with_other_bytes_never_replaces_a_local_line(tmp_path: Path) -> None:
    """Two writers minted one id (a clock bug, a hand edit): the second sync stops."""
    path = bare(tmp_path / "remote.git")
    a = replica(tmp_path, "a", str(path))
    b = replica(tmp_path, "b", str(path), seed=a)
    shared = at(now_ms() + 1000, 12345)
    theirs = write(a, shared, "a's event")
    mine = write(b, shared, "b's event")
    sync(a, options=FAST)
    before, head = files(b), b.head()
    with pytest.raises(SyncError, match=shared) as refused:
        sync(b, options=FAST)
    assert "origin" in str(refused.value)
    assert (files(b), b.head()) == (before, head)
    assert event_lines(b).count(canonical(mine)) == 1, "b's event was replaced"
    assert remote_lines(path).count(canonical(theirs)) == 1


# --- item: edits of existing events on a remote ----------------------------------------------


def test_an_edited_event_on_the_remote_is_refused_kept_and_flagged(tmp_path: Path) -> None:
    path = bare(tmp_path / "remote.git")
    a = replica(tmp_path, "a", str(path))
    b = replica(tmp_path, "b", str(path), seed=a)
    [event] = append(a, 1, text="the original words")
    sync(a, options=FAST)
    sync(b, options=FAST)
    original = canonical(event)
    edit_on_remote(tmp_path, path, b"the original words", b"words put in my mouth")
    append(b, 1, text="written after")
    before, head = files(b), b.head()
    with pytest.raises(SyncError, match=event.id) as refused:
        sync(b, options=FAST)
    message = str(refused.value)
    assert "origin" in message and "never edited" in message and "\n" not in message
    assert (files(b), b.head()) == (before, head), "the local store changed"
    assert event_lines(b).count(original) == 1
    report = doctor.examine(b)
    assert [(f.remote, f.ids) for f in report.remotes] == [("origin", [event.id])]
    # syncing every remote names the failure and keeps going
    assert [f.remote for f in sync_every(b, FAST).failed] == ["origin"]
    # the remote is put back (a revert of the edit): the next sync goes through, the flag goes
    work = tmp_path / "fix"
    git("clone", "-q", "-b", "main", str(path), str(work))
    git("revert", "--no-edit", "HEAD", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    assert sync(b, options=FAST).pushed == 1
    assert doctor.examine(b).remotes == []
    assert event_lines(b).count(original) == 1
    sync(a, options=FAST)
    same(a, b)


def test_an_edit_is_refused_even_after_a_local_sync_with_nothing_to_push(tmp_path: Path) -> None:
    """No local event to publish (a fast-forward): the edit is still not taken."""
    path = bare(tmp_path / "remote.git")
    a = replica(tmp_path, "a", str(path))
    b = replica(tmp_path, "b", str(path), seed=a)
    [event] = append(a, 1, text="the original words")
    sync(a, options=FAST)
    sync(b, options=FAST)
    edit_on_remote(tmp_path, path, b"the original words", b"other words")
    before = files(b)
    with pytest.raises(SyncError, match=event.id):
        sync(b, options=FAST)
    assert files(b) == before
    assert event_lines(b).count(canonical(event)) == 1


def test_a_merge_of_two_published_histories_never_takes_an_edit(tmp_path: Path) -> None:
    """Two remotes: the event was edited on Y, the local history is on X; no merge is made."""
    from tests.support.sync_support import World

    w = World(tmp_path)
    [event] = append(w.a, 1, text="the original words")
    w.sync(w.a, "x")
    w.sync(w.a, "y")
    edit_on_remote(tmp_path, w.y, b"the original words", b"other words")
    append(w.a, 1, text="later")
    w.sync(w.a, "x")  # the local history is published on X: a sync with Y must merge
    before, head = files(w.a), w.a.head()
    with pytest.raises(SyncError, match=event.id) as refused:
        sync(w.a, "y", FAST)
    assert "remote y" in str(refused.value)
    assert (files(w.a), w.a.head()) == (before, head)
    assert [(f.remote, f.ids) for f in doctor.examine(w.a).remotes] == [("y", [event.id])]


def test_the_clock_never_moves_to_an_id_beyond_the_horizon(tmp_path: Path) -> None:
    """Whatever path an id comes by (an import, a log written by hand), the clock stays."""
    store = new_store(tmp_path / "s")
    mark = high_water(store.clock_file)
    store.observe(["7zzzzzzzzzzzzzzzzzzzzzzzzz", at(now_ms() + 2 * DAY_MS)])
    assert high_water(store.clock_file) == mark
    [fresh] = append(store, 1)
    assert fresh.id < at(now_ms() + ids.HORIZON_MS)
    soon = at(now_ms() + 3600 * 1000)
    store.observe([soon])
    assert high_water(store.clock_file) == soon


def test_a_bad_clock_offset_is_a_clear_error(tmp_path: Path) -> None:
    store = new_store(tmp_path / "s")
    with clock_offset("five seconds"), pytest.raises(StoreError, match="SELF_CLOCK_OFFSET_MS"):
        append(store, 1)


def test_a_merge_of_two_published_histories_refuses_an_id_far_ahead(tmp_path: Path) -> None:
    from tests.support.sync_support import World

    w = World(tmp_path)
    late = at(now_ms() + 2 * DAY_MS)
    write(w.b, late, "two days ahead")
    w.sync(w.b, "y")
    append(w.a, 1, text="later")
    w.sync(w.a, "x")  # the local history is published on X: a sync with Y must merge
    before, head, mark = files(w.a), w.a.head(), high_water(w.a.clock_file)
    with pytest.raises(SyncError, match=late) as refused:
        sync(w.a, "y", FAST)
    assert "remote y" in str(refused.value)
    assert (files(w.a), w.a.head(), high_water(w.a.clock_file)) == (before, head, mark)
