"""The service's slice in memory (`hotslice.Kept`), advanced batch by batch beside the whole
state, gives the context and status the whole state gives, and keeps what `split` keeps."""

from __future__ import annotations

from itertools import pairwise

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.core.commands.config import WorkspaceConfig
from service.core.events.events import Event
from service.core.fold import fold
from service.core.fold.fold import fold_all
from service.core.fold.hotslice import Kept, split
from service.core.fold.state import State
from service.core.projections.context import build_context
from service.core.projections.status import build_status
from tests.support.strategies import histories

TODAY = "2026-11-30"
NOW = "2026-11-30T09:00:00.000Z"


def batches(events: list[Event], cuts: list[int]) -> list[list[Event]]:
    edges = [0, *sorted({min(c, len(events)) for c in cuts}), len(events)]
    return [events[a:b] for a, b in pairwise(edges) if b > a]


def documents(kept: Kept, whole: State) -> tuple[tuple[bytes, bytes], tuple[bytes, bytes]]:
    config = WorkspaceConfig()
    context = (
        build_context("app", kept.state, [], config, TODAY, {}, 0, cold=kept.cold, near=kept.near, now=NOW),
        build_context("app", whole, [], config, TODAY, {}, 0, now=NOW),
    )
    status = (
        build_status("app", kept.state, {}, [], TODAY, NOW, cold=kept.cold, near=kept.near, fetch=kept.fetch),
        build_status("app", whole, {}, [], TODAY, NOW),
    )
    encode = msgspec.json.encode
    return (encode(context[0]), encode(context[1])), (encode(status[0]), encode(status[1]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=histories(max_steps=50), cuts=st.lists(st.integers(1, 50), max_size=50))
def test_a_slice_advanced_batch_by_batch_reads_as_the_whole_state(
    events: list[Event], cuts: list[int]
) -> None:
    state = State()
    kept = Kept(state)
    for batch in batches(events, cuts):
        kept.advance(batch, lambda batch=batch: fold.fold(batch, state))  # type: ignore[misc]
        whole = fold_all(events[: events.index(batch[-1]) + 1])
        assert msgspec.json.encode(state) == msgspec.json.encode(whole)
        (context_slice, context_whole), (status_slice, status_whole) = documents(kept, whole)
        assert context_slice == context_whole
        assert status_slice == status_whole
        hot, _, counts = split(whole)
        assert set(kept.entities) == set(hot.entities)
        assert kept.cold == counts
        assert kept.ids == sorted(whole.entities)


@given(events=histories(max_steps=30))
def test_holds_finds_every_id_by_any_prefix_and_no_other(events: list[Event]) -> None:
    kept = Kept(fold_all(events))
    for entity_id in kept.ids:
        assert kept.holds(entity_id[:10].upper())
        assert kept.holds(entity_id)
    assert not kept.holds("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz")


@given(events=histories(max_steps=20))
def test_a_fold_that_fails_leaves_the_slice_rebuilt_from_what_the_state_holds(events: list[Event]) -> None:
    state = fold_all(events[:-1])
    kept = Kept(state)

    def broken() -> None:
        fold.fold(events[-1:], state)
        raise RuntimeError("the disk went away")

    with pytest.raises(RuntimeError, match="went away"):
        kept.advance(events[-1:], broken)
    hot, _, counts = split(state)
    assert set(kept.entities) == set(hot.entities)
    assert kept.cold == counts
    assert kept.ids == sorted(state.entities)
