"""The fold cache gives exactly the state a full fold_all gives, whatever happened to the log."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from service.adapters.store import Quarantine, Store
from service.adapters.store.cache import REWRITE_TAIL
from service.adapters.store.layout import cache_file
from service.core.events.events import (
    Assertion,
    EntityWhy,
    Event,
    Origin,
    Placed,
    ReportAdded,
    make,
)
from service.core.fold.fold import fold_all
from service.core.fold.state import State

ORIGIN = Origin("agent", True)
TS = "2026-11-30T09:57:45.069Z"


def mixed(ids: list[str], known: list[str]) -> list[Event]:
    """Proposals, placements, starts and reports over the records made so far."""
    out = []
    for n, event_id in enumerate(ids):
        if n % 4 == 0 or not known:
            known.append(event_id)
            out.append(
                make(
                    event_id,
                    TS,
                    "entity.proposed",
                    ORIGIN,
                    "app",
                    Assertion(entity=event_id, text=f"record {n}", labels=("work",)),
                )
            )
        elif n % 4 == 1:
            out.append(
                make(
                    event_id,
                    TS,
                    "entity.placed",
                    ORIGIN,
                    "app",
                    Placed(known[n % len(known)], priority=n % 7),
                )
            )
        elif n % 4 == 2:
            out.append(make(event_id, TS, "entity.started", ORIGIN, "app", EntityWhy(known[n % len(known)])))
        else:
            out.append(
                make(
                    event_id,
                    TS,
                    "report.added",
                    ORIGIN,
                    "app",
                    ReportAdded("progress", work=known[n % len(known)]),
                )
            )
    return out


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.init(tmp_path)


def grow(store: Store, n: int, known: list[str]) -> None:
    with store.transaction("app") as tx:
        tx.append(mixed(tx.next_ids(n), known))


def truth(store: Store) -> tuple[State, list[Quarantine]]:
    log = store.read("app")
    return fold_all(log.events), log.quarantined


def test_cache_matches_a_full_fold_through_appends(store: Store) -> None:
    known: list[str] = []
    for size in (1, 5, 994, 1, 1000, 1500, 3):
        grow(store, size, known)
        assert store.state("app") == truth(store)
    assert cache_file(store.root, "app").exists()


def test_small_tails_do_not_rewrite_the_snapshot_and_long_ones_do(store: Store) -> None:
    known: list[str] = []
    grow(store, 10, known)
    store.state("app")
    path = cache_file(store.root, "app")
    written = path.read_bytes()
    grow(store, 10, known)
    assert store.state("app") == truth(store)
    assert path.read_bytes() == written
    grow(store, REWRITE_TAIL, known)
    assert store.state("app") == truth(store)
    assert path.read_bytes() != written


def test_an_edit_that_is_not_an_append_refolds(store: Store) -> None:
    known: list[str] = []
    grow(store, 1200, known)
    store.state("app")
    first = store.root / "projects/app/log/000000.jsonl"
    lines = first.read_bytes().splitlines(keepends=True)
    first.write_bytes(b"".join(lines[:500] + lines[501:]))  # a line removed from an old segment
    assert store.state("app") == truth(store)
    last = store.root / "projects/app/log/000001.jsonl"
    data = last.read_bytes()
    same_size = data.replace(b'"progress"', b'"progresZ"', 1)
    assert len(same_size) == len(data) and same_size != data
    last.write_bytes(same_size)  # same size, other bytes, in the growing segment
    state, quarantined = store.state("app")
    assert (state, quarantined) == truth(store)


def test_a_same_size_edit_of_an_old_segment_refolds(store: Store) -> None:
    known: list[str] = []
    grow(store, 1100, known)
    store.state("app")
    first = store.root / "projects/app/log/000000.jsonl"
    data = first.read_bytes()
    stat = os.stat(first)
    first.write_bytes(data.replace(b'"record 0"', b'"record Z"', 1))
    os.utime(first, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert store.state("app") == truth(store)


def test_a_corrupt_or_foreign_cache_file_is_rebuilt(store: Store) -> None:
    known: list[str] = []
    grow(store, 50, known)
    store.state("app")
    path = cache_file(store.root, "app")
    good = path.read_bytes()
    for bad in (b"", b"garbage", good[: len(good) // 2], msgspec.msgpack.encode({"format": 99})):
        path.write_bytes(bad)
        assert store.state("app") == truth(store)
        assert path.read_bytes() != bad


def test_older_events_inserted_by_an_import_refold(store: Store) -> None:
    known: list[str] = []
    with store.transaction("app") as tx:
        early = tx.next_ids(20)
        grow(store, 30, known)
    store.state("app")
    assert store.import_events("app", mixed(early, known)) == 20
    assert store.state("app") == truth(store)


def test_quarantined_lines_survive_the_cache(store: Store) -> None:
    known: list[str] = []
    grow(store, 10, known)
    segment = store.root / "projects/app/log/000000.jsonl"
    *lines, last = segment.read_bytes().splitlines(keepends=True)
    segment.write_bytes(b"".join([*lines, b"not an event\n", last]))  # a last one is set aside
    first = store.state("app")
    grow(store, 10, known)
    with open(segment, "ab") as handle:
        handle.write(b"[]\n")
    second = store.state("app")
    assert first == (fold_all(store.read("app").events[:10]), first[1])
    assert second == truth(store)
    assert [q.line for q in second[1]] == [10, 22]


def test_the_workspace_log_has_its_own_cache(store: Store) -> None:
    with store.transaction("") as tx:
        first = tx.next_ids(1)[0]
        tx.append(
            [
                make(
                    first,
                    tx.now(),
                    "entity.proposed",
                    ORIGIN,
                    "",
                    Assertion(entity=first, text="a workspace record"),
                )
            ]
        )
    state, _ = store.state("")
    assert list(state.entities) == [first]
    assert cache_file(store.root, "").name == "_workspace.msgpack"
    assert cache_file(store.root, "").exists()
