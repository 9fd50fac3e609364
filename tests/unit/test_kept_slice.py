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
    filler = kept.filled if kept.fill else None
    context = (
        build_context(
            "app",
            kept.state,
            [],
            config,
            TODAY,
            {},
            0,
            cold=kept.cold,
            near=kept.near,
            now=NOW,
            filler=filler,
        ),
        build_context("app", whole, [], config, TODAY, {}, 0, now=NOW),
    )
    status = (
        build_status("app", kept.state, {}, [], TODAY, NOW, cold=kept.cold, near=kept.near, fetch=kept.fetch),
        build_status("app", whole, {}, [], TODAY, NOW),
    )
    encode = msgspec.json.encode
    return (encode(context[0]), encode(context[1])), (encode(status[0]), encode(status[1]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=histories(max_steps=50), cuts=st.lists(st.integers(1, 50), max_size=50), fill=st.booleans())
def test_a_slice_advanced_batch_by_batch_reads_as_the_whole_state(
    events: list[Event], cuts: list[int], fill: bool
) -> None:
    """With `fill` (a project's log) the records that only fill a section are held apart, in
    the order context reads them, as they move in and out with the batches."""
    state = State()
    kept = Kept(state, fill)
    for batch in batches(events, cuts):
        kept.advance(batch, lambda batch=batch: fold.fold(batch, state))  # type: ignore[misc]
        whole = fold_all(events[: events.index(batch[-1]) + 1])
        assert msgspec.json.encode(state) == msgspec.json.encode(whole)
        (context_slice, context_whole), (status_slice, status_whole) = documents(kept, whole)
        assert context_slice == context_whole
        assert status_slice == status_whole
        hot, _, counts = split(whole, fill)
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


# A goal proposed; a decision proposed to replace it; an objective proposed to replace that
# decision; the goal set (Superself's); the objective confirmed. (A history the property test
# above found, made as small as it fails.)
CHAINED = [
    b'{"id":"01ksr492000000000000000012","ts":"2026-05-28T20:26:40.000Z","type":"entity.proposed",'
    b'"origin":{"actor":"agent","confirmed":false},"project":"app","payload":{"criteria":[],'
    b'"entity":"01ksr492000000000000000012","exposure":"full","labels":["goal"],"links":[],'
    b'"priority":null,"text":"0"}}',
    b'{"id":"01ksr492000000000000000018","ts":"2026-05-28T20:26:40.000Z","type":"decision.proposed",'
    b'"origin":{"actor":"agent","confirmed":false},"project":"app","payload":{"text":"0"},'
    b'"refs":{"supersedes":["01ksr492000000000000000012"]}}',
    b'{"id":"01ksr49200000000000000001b","ts":"2026-05-28T20:26:40.000Z","type":"objective.created",'
    b'"origin":{"actor":"agent","confirmed":false},"project":"app","payload":{"objective":'
    b'"01ksr49200000000000000001b","outcome":"0","proposed":true,"target":"2099-01-01"},'
    b'"refs":{"supersedes":["01ksr492000000000000000018"]}}',
    b'{"id":"01ksr492010000000000000004","ts":"2026-05-28T20:26:40.001Z","type":"goal.set",'
    b'"origin":{"actor":"agent","confirmed":false},"project":"app","payload":{"text":"0"}}',
    b'{"id":"01ksr49201000000000000000g","ts":"2026-05-28T20:26:40.001Z","type":"entity.confirmed",'
    b'"origin":{"actor":"human","confirmed":true},"project":"app","payload":{"entity":'
    b'"01ksr49200000000000000001b"}}',
]


def test_a_proposal_confirmed_over_another_re_judges_what_that_one_would_have_replaced() -> None:
    """Confirming the objective replaces the decision, and the goal the decision would have
    replaced changes with it though no event names it: the slice judges it again."""
    events = [msgspec.json.decode(line, type=Event) for line in CHAINED]
    state = State()
    kept = Kept(state)
    for n, event in enumerate(events, 1):
        kept.advance([event], lambda event=event: fold.fold([event], state))  # type: ignore[misc]
        assert set(kept.entities) == set(split(fold_all(events[:n]))[0].entities)
