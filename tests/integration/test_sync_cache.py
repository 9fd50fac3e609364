"""The fold cache after a sync that did more than append: it folds the events after the base
(the log as a remote last held it) instead of the whole log, and gives exactly what a full
fold gives, whatever the syncs inserted."""

from __future__ import annotations

import tempfile
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.adapters.store import Store, cache
from service.adapters.sync import sync
from service.core.events.events import Event
from service.core.fold.fold import fold_all
from service.core.fold.state import State
from tests.support.sync_support import FAST, append, close_all, pair


class Folds:
    """Counts what the fold cache does: whole-log rebuilds, and events folded on top."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rebuilds = 0
        self.folded = 0
        rebuild, advance = cache._rebuild, cache.advance

        def counted_rebuild(*args: object) -> object:
            self.rebuilds += 1
            return rebuild(*args)  # type: ignore[arg-type]

        def counted_advance(state: State, tail: list[Event], conflicts: list[str] | None = None) -> None:
            self.folded += len(tail)
            advance(state, tail, conflicts)

        monkeypatch.setattr(cache, "_rebuild", counted_rebuild)
        monkeypatch.setattr(cache, "advance", counted_advance)

    def reset(self) -> None:
        self.rebuilds = self.folded = 0


def same_as_full_fold(store: Store, log: str = "app") -> None:
    cached, _ = store.state(log)
    whole = fold_all(store.read(log).events)
    assert msgspec.json.encode(cached, order="sorted") == msgspec.json.encode(whole, order="sorted")


def test_a_sync_that_puts_remote_events_first_folds_only_the_events_after_the_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a, b = pair(tmp_path)
    append(a, 40, text="shared")
    sync(a, options=FAST)
    a.state("app")  # folded exactly to what the remote holds: this snapshot becomes the base
    assert (a.local_dir / "cache" / "app.base.msgpack").exists()
    sync(b, options=FAST)
    append(b, 5, text="b")
    sync(b, options=FAST)
    append(a, 3, text="a")
    before = (a.root / "projects/app/log/000000.jsonl").read_bytes()
    sync(a, options=FAST)
    assert not (a.root / "projects/app/log/000000.jsonl").read_bytes().startswith(before)
    folds = Folds(monkeypatch)
    same_as_full_fold(a)
    assert folds.rebuilds == 0, "the whole log was folded again"
    assert folds.folded == 8  # B's five and A's three, on top of the base
    folds.reset()
    a.state("app")
    assert (folds.rebuilds, folds.folded) == (0, 0)  # the result was kept as the snapshot


def test_an_event_older_than_the_base_refolds_the_whole_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache, "REWRITE_TAIL", 1)  # every read writes its snapshot back
    _, a, b = pair(tmp_path)
    older = append(b, 2, text="b, written first, synced last")
    append(a, 2, text="a")
    a.state("app")
    sync(a, options=FAST)  # the base now ends after A's events
    sync(b, options=FAST)  # B's older events go after them on the remote
    append(a, 1, text="a again")
    sync(a, options=FAST)
    base = cache._load(a.local_dir / "cache" / "app.base.msgpack")
    assert base is not None and base.last_id is not None and older[0].id < base.last_id
    folds = Folds(monkeypatch)
    same_as_full_fold(a)
    assert folds.rebuilds == 1


def test_a_base_the_log_no_longer_starts_with_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, a, _ = pair(tmp_path)
    append(a, 3)
    sync(a, options=FAST)
    a.state("app")
    segment = a.root / "projects/app/log/000000.jsonl"
    lines = segment.read_bytes().splitlines(keepends=True)
    segment.write_bytes(b"".join([lines[1], lines[0], *lines[2:]]))  # a hand edit reorders the log
    cache.drop(a.root, "app")
    folds = Folds(monkeypatch)
    same_as_full_fold(a)
    assert folds.rebuilds == 1


# --- random appends and syncs ------------------------------------------------------------------


def steps() -> st.SearchStrategy[tuple[str, int, int]]:
    return st.one_of(
        st.tuples(st.just("append"), st.integers(0, 1), st.integers(1, 4)),
        st.tuples(st.just("sync"), st.integers(0, 1), st.just(0)),
        st.tuples(st.just("read"), st.integers(0, 1), st.just(0)),
    )


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schedule=st.lists(steps(), min_size=8, max_size=30), rewrite=st.sampled_from([1, 2000]))
def test_the_cached_state_equals_a_full_fold_through_random_syncs(
    schedule: list[tuple[str, int, int]], rewrite: int
) -> None:
    """Two replicas append, sync and read at random (so syncs insert remote events before local
    ones, some newer and some older than the base); every read of the cached state, and the
    last one, gives the full fold of the log."""
    kept = cache.REWRITE_TAIL
    cache.REWRITE_TAIL = rewrite  # 1: every read writes its snapshot back; 2000: short tails are folded again
    try:
        with tempfile.TemporaryDirectory() as folder:
            stores = pair(Path(folder))[1:]
            try:
                append(stores[0], 3, text="shared")
                for store in (*stores, stores[0]):
                    sync(store, options=FAST)
                    store.state("app")
                for kind, n, count in schedule:
                    if kind == "append":
                        append(stores[n], count, text=f"r{n}")
                    elif kind == "sync":
                        sync(stores[n], options=FAST)
                    else:
                        same_as_full_fold(stores[n])
                for store in stores:
                    same_as_full_fold(store)
            finally:
                close_all()
    finally:
        cache.REWRITE_TAIL = kept
