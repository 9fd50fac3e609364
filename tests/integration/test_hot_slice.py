"""The hot slice gives context exactly what the whole state gives it, however the log grew."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.adapters.store import cache, layout
from service.adapters.store import hot as hot_cache
from service.core.commands.config import WorkspaceConfig
from service.core.events import ids
from service.core.events.events import Event, Origin, canonical
from service.core.fold.fold import fold_all
from service.core.projections.context import build_context
from service.core.projections.status import build_status
from tests.support.eventcheck import checked_tempdir
from tests.support.strategies import histories

TODAY = "2026-11-30"
FEW = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def append(root: Path, events: list[Event]) -> None:
    """Append canonical lines to the project's segments, 1,000 to a file, as the store does."""
    folder = root / layout.log_dir("app")
    folder.mkdir(parents=True, exist_ok=True)
    for event in events:
        names = layout.segments(root, "app")
        name = names[-1] if names else layout.segment_name(0)
        path = folder / name
        if path.exists() and path.read_bytes().count(b"\n") >= layout.SEGMENT_EVENTS:
            path = folder / layout.segment_name(layout.segment_index(name) + 1)
        with path.open("ab") as handle:
            handle.write(canonical(event))


def contexts(root: Path, events: list[Event]) -> tuple[bytes, bytes]:
    sliced = hot_cache.hot(root, "app")
    whole = fold_all(events)
    assert sliced.ids() == sorted(whole.entities)
    config = WorkspaceConfig()
    kept_out = {"cold": sliced.cold, "near": sliced.near, "filler": sliced.filler}
    from_slice = build_context("app", sliced.state, [], config, TODAY, {}, 0, **kept_out)  # type: ignore[arg-type]
    from_whole = build_context("app", whole, [], config, TODAY, {}, 0)
    return msgspec.json.encode(from_slice), msgspec.json.encode(from_whole)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=histories(max_steps=50),
    cuts=st.lists(st.integers(1, 50), max_size=4),
    rewrite=st.sampled_from([1, 10**6]),
)
def test_context_from_the_slice_equals_context_from_the_whole_state(
    events: list[Event], cuts: list[int], rewrite: int
) -> None:
    kept = hot_cache.REWRITE_TAIL
    hot_cache.REWRITE_TAIL = rewrite  # 1: every tail written back; 10**6: tails folded again
    try:
        grow(events, cuts)
    finally:
        hot_cache.REWRITE_TAIL = kept


def grow(events: list[Event], cuts: list[int]) -> None:
    with checked_tempdir() as tmp:
        root = Path(tmp)
        done = 0
        for cut in [*sorted({min(c, len(events)) for c in cuts}), len(events)]:
            if cut <= done:
                continue
            append(root, events[done:cut])
            done = cut
            from_slice, from_whole = contexts(root, events[:done])
            assert from_slice == from_whole


@FEW
@given(events=histories(max_steps=30))
def test_a_table_out_of_step_with_the_snapshot_is_rebuilt(events: list[Event]) -> None:
    with checked_tempdir() as tmp:
        out_of_step(Path(tmp), events)


def out_of_step(tmp_path: Path, events: list[Event]) -> None:
    append(tmp_path, events[: len(events) // 2])
    hot_cache.hot(tmp_path, "app")
    _, table_path = hot_cache._paths(tmp_path, "app")
    with sqlite3.connect(table_path) as table:  # as if a crash hit between the two writes
        table.execute("UPDATE meta SET value = 'zz' WHERE key = 'last_id'")
    append(tmp_path, events[len(events) // 2 :])
    from_slice, from_whole = contexts(tmp_path, events)
    assert from_slice == from_whole


@FEW
@given(events=histories(max_steps=30))
def test_a_corrupt_slice_file_is_rebuilt(events: list[Event]) -> None:
    with checked_tempdir() as tmp:
        corrupt(Path(tmp), events)


def corrupt(tmp_path: Path, events: list[Event]) -> None:
    append(tmp_path, events)
    hot_cache.hot(tmp_path, "app")
    snapshot_path, _ = hot_cache._paths(tmp_path, "app")
    snapshot_path.write_bytes(b"\x00garbage")
    from_slice, from_whole = contexts(tmp_path, events)
    assert from_slice == from_whole


@FEW
@given(events=histories(max_steps=30), how=st.sampled_from(["truncated", "garbled", "emptied"]))
def test_a_corrupt_table_file_is_rebuilt(events: list[Event], how: str) -> None:
    """A cold table cut short, overwritten with other bytes or emptied is not trusted: the
    slice and its table are made again from the log."""
    with checked_tempdir() as tmp:
        root = Path(tmp)
        append(root, events)
        hot_cache.hot(root, "app").filling()
        _, table_path = hot_cache._paths(root, "app")
        data = table_path.read_bytes()
        spoiled = {"truncated": data[: len(data) // 3], "garbled": b"\x13garbage" * 500, "emptied": b""}
        table_path.write_bytes(spoiled[how])
        for extra in table_path.parent.glob(table_path.name + "-*"):  # the write-ahead log
            extra.unlink()
        from_slice, from_whole = contexts(root, events)
        assert from_slice == from_whole


@FEW
@given(events=histories(max_steps=30))
def test_a_table_from_before_sections_were_kept_is_made_again(events: list[Event]) -> None:
    """A cold table without the section columns (an older build's) is dropped and the slice
    rebuilt, though its meta row names the snapshot's last id."""
    with checked_tempdir() as tmp:
        root = Path(tmp)
        append(root, events)
        hot_cache.hot(root, "app")
        _, table_path = hot_cache._paths(root, "app")
        with sqlite3.connect(table_path) as table:
            table.execute("DROP TABLE cold")
            table.execute("CREATE TABLE cold (id TEXT PRIMARY KEY, record BLOB NOT NULL, alias TEXT)")
        from_slice, from_whole = contexts(root, events)
        assert from_slice == from_whole


def many_records(n: int) -> list[Event]:
    """`n` confirmed records of some length at full and index exposure: a table of many pages."""
    events: list[Event] = []
    last = None
    for number in range(n):
        last = ids.next_id(last, 1_795_000_000_000 + number, 0)
        exposure = "full" if number % 2 else "index"
        payload = {"entity": last, "text": f"record {number} " + "words " * 60, "labels": ["note"]}
        body = msgspec.json.encode({**payload, "exposure": exposure, "priority": number % 7})
        events.append(
            Event(last, "2026-11-30T09:00:00.000Z", "entity.confirmed", Origin("human", True), "app", body)
        )
    return events


def test_a_table_spoilt_inside_is_made_again_when_a_read_finds_it() -> None:
    """Pages overwritten inside the table (its header and length intact): the read that meets
    one makes the table again from the log and answers as the whole state does; the next
    process reads the new table."""
    events = many_records(600)
    with checked_tempdir() as tmp:
        root = Path(tmp)
        append(root, events)
        hot_cache.hot(root, "app")
        _, table_path = hot_cache._paths(root, "app")
        data = bytearray(table_path.read_bytes())
        for page in range(2, len(data) // 4096, 3):
            data[page * 4096 : (page + 1) * 4096] = bytes(range(256)) * 16
        table_path.write_bytes(bytes(data))
        assert hot_cache._sound(table_path)  # nothing the opening sees
        from_slice, from_whole = contexts(root, events)
        assert from_slice == from_whole
        status_slice, status_whole = statuses(root, events, {})
        assert status_slice == status_whole
        assert len(hot_cache.hot(root, "app").filling()) == 600


def statuses(root: Path, events: list[Event], runs: dict[str, str]) -> tuple[bytes, bytes]:
    sliced = hot_cache.hot(root, "app")
    whole = fold_all(events)
    now = "2026-11-30T09:00:00.000Z"
    from_slice = build_status(
        "app", sliced.state, runs, [], TODAY, now, cold=sliced.cold, near=sliced.near, fetch=sliced.fetch
    )
    return msgspec.json.encode(from_slice), msgspec.json.encode(
        build_status("app", whole, runs, [], TODAY, now)
    )


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=histories(max_steps=50),
    cuts=st.lists(st.integers(1, 50), max_size=4),
    rewrite=st.sampled_from([1, 10**6]),
    data=st.data(),
)
def test_status_from_the_slice_equals_status_from_the_whole_state(
    events: list[Event], cuts: list[int], rewrite: int, data: st.DataObject
) -> None:
    """Status from the slice (with the counts, neighbours and records it left out) is status
    from the whole state, whatever processes the local ledger names."""
    kept = hot_cache.REWRITE_TAIL
    hot_cache.REWRITE_TAIL = rewrite
    try:
        with checked_tempdir() as tmp:
            root = Path(tmp)
            done = 0
            for cut in [*sorted({min(c, len(events)) for c in cuts}), len(events)]:
                if cut <= done:
                    continue
                append(root, events[done:cut])
                done = cut
                known = sorted(fold_all(events[:done]).entities)
                alive = data.draw(
                    st.lists(st.sampled_from(known or ["01zzzzzzzzzzzzzzzzzzzzzzzz"]), max_size=3)
                )
                runs = {i: data.draw(st.sampled_from(["running", "stale", "exited"])) for i in alive}
                from_slice, from_whole = statuses(root, events[:done], runs)
                assert from_slice == from_whole
    finally:
        hot_cache.REWRITE_TAIL = kept


def append_small(root: Path, events: list[Event], per_segment: int) -> None:
    """The events in segments of `per_segment` lines each (a log of many segments)."""
    folder = root / layout.log_dir("app")
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(events), per_segment):
        path = folder / layout.segment_name(start // per_segment)
        path.write_bytes(b"".join(canonical(e) for e in events[start : start + per_segment]))


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=histories(max_steps=50), per_segment=st.integers(1, 9), shuffled=st.booleans())
def test_a_first_build_over_many_segments_gives_what_the_whole_state_gives(
    events: list[Event], per_segment: int, shuffled: bool
) -> None:
    """A log of many segments is folded one segment at a time (or, when its file order is
    not by id, whole); the state is fold_all's, and the slice built from it gives context
    and status what the whole state gives. The slice's build writes no whole-state snapshot."""
    written = list(reversed(events)) if shuffled else events
    with checked_tempdir() as tmp:
        root = Path(tmp)
        append_small(root, written, per_segment)
        from_slice, from_whole = contexts(root, events)
        assert from_slice == from_whole
        status_slice, status_whole = statuses(root, events, {})
        assert status_slice == status_whole
        assert not layout.cache_file(root, "app").exists()
        state, _ = cache.folded(root, "app")
        assert msgspec.json.encode(state) == msgspec.json.encode(fold_all(events))
        assert layout.cache_file(root, "app").exists()
