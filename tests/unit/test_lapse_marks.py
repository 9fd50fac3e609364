"""The instants at which proposals lapse (`lapse.lapses_at`, `lapse.marks`) agree with
`lapse.lapsed` at every instant, so a rendered answer keyed by how many marks have passed
(`LiveWorkspace.lapsed_by`) is the answer for any instant with that count."""

from __future__ import annotations

import bisect
import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from service.core.fold import lapse
from service.core.fold.state import Entity

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
MOMENTS = st.integers(min_value=0, max_value=40 * 86_400_000)  # ms after START


def _iso(ms: int, zone: dt.timezone = dt.UTC, micro: int = 0) -> str:
    moment = (START + dt.timedelta(milliseconds=ms, microseconds=micro)).astimezone(zone)
    return moment.isoformat()


def _clock(ms: int) -> str:
    moment = START + dt.timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@st.composite
def proposals(draw: st.DrawFn) -> Entity:
    kind = draw(st.sampled_from(["decision", "work", "goal", "note"]))
    zone = dt.timezone(dt.timedelta(hours=draw(st.integers(-11, 12))))
    made = _iso(draw(MOMENTS), zone, draw(st.integers(0, 999)))
    day = (START.date() + dt.timedelta(days=draw(st.integers(0, 40)))).isoformat()
    return Entity(
        id="x",
        project="app",
        text="t",
        labels=[kind],
        links=[],
        criteria=[],
        covered=[],
        exposure="search",
        priority=None,
        scope="",
        status=draw(st.sampled_from(["proposed", "proposed", "confirmed"])),
        created=made,
        updated=made,
        proposed_at=draw(st.sampled_from([made, None, "not a time"])),
        expires=draw(st.sampled_from([day, None, "2026-13-40"])),
    )


@given(st.lists(proposals(), max_size=8), MOMENTS, MOMENTS)
def test_as_many_marks_passed_judges_every_proposal_alike(entities: list[Entity], a: int, b: int) -> None:
    marks = lapse.marks(entities)
    first, second = _clock(a), _clock(b)
    if bisect.bisect_right(marks, first) == bisect.bisect_right(marks, second):
        assert [lapse.lapsed(e, first) for e in entities] == [lapse.lapsed(e, second) for e in entities]


@given(proposals(), MOMENTS)
def test_a_proposal_is_lapsed_exactly_from_its_mark(e: Entity, at: int) -> None:
    mark, now = lapse.lapses_at(e), _clock(at)
    assert lapse.lapsed(e, now) == (mark is not None and now >= mark)
