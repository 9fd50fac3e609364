"""`self status` counts in one pass over the records what it counted in one pass per figure
(`tests/support/status_before.py`, the oracle): the same document, byte for byte, for random
histories (Superself's and the ledger's), on the whole state and on a hot slice, at instants
before and after proposals lapse."""

from __future__ import annotations

import hypothesis.strategies as st
import msgspec
from hypothesis import HealthCheck, given, settings

from service.core.events.events import Event
from service.core.fold.fold import fold_all
from service.core.fold.hotslice import Kept
from service.core.fold.state import State
from service.core.projections import status
from tests.support import status_before as before
from tests.support.strategies import histories
from tests.unit.test_ledger_properties import ledger_histories

TODAYS = ("2026-01-01", "2026-11-30", "2027-06-01")
NOWS = (None, "2026-11-30T09:00:00.000Z", "2027-06-01T00:00:00.000Z")


def _same(whole: State, today: str, now: str | None) -> None:
    encode = msgspec.json.encode
    runs = {"w-1": "running"}
    assert encode(status.build_status("app", whole, runs, [], today, now)) == encode(
        before.build_status("app", whole, runs, [], today, now)
    )
    kept = Kept(whole)
    args = {"cold": kept.cold, "near": kept.near, "fetch": kept.fetch}
    new = status.build_status("app", kept.state, runs, [("log", 3, "bad")], today, now, **args)  # type: ignore[arg-type]
    old = before.build_status("app", kept.state, runs, [("log", 3, "bad")], today, now, **args)  # type: ignore[arg-type]
    assert encode(new) == encode(old)
    assert status.render_status(new) == before.render_status(old)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=histories(max_steps=60), today=st.sampled_from(TODAYS), now=st.sampled_from(NOWS))
def test_superself_histories_count_as_they_did_one_figure_at_a_time(
    events: list[Event], today: str, now: str | None
) -> None:
    _same(fold_all(events), today, now)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=ledger_histories(), today=st.sampled_from(TODAYS), now=st.sampled_from(NOWS))
def test_ledger_histories_count_as_they_did_one_figure_at_a_time(
    events: list[Event], today: str, now: str | None
) -> None:
    _same(fold_all(events), today, now)


def test_status_counts_every_figure_in_one_pass_over_the_records() -> None:
    from tests.support.builders import Log

    log = Log()
    goal = log.entity("ship it", "goal")
    log.entity("later", "work", proposed=True)
    state = log.state()
    census = status.Census(state, "2026-11-30", None)
    assert census.goal() is not None and census.goal().id == goal  # type: ignore[union-attr]
    assert census.waiting == 1 and census.lapsed == 0
