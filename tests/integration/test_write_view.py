"""A command on the hot slice with the cold records it names gives exactly what it gives on
the whole state: the same events, or the same refusal (`adapters/store/hot.py: view`,
`requests.named`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.adapters.store import hot as hot_cache
from service.core.commands import requests as rq
from service.core.commands.commands import Clock
from service.core.commands.config import WorkspaceConfig
from service.core.commands.handle import handle
from service.core.errors import ModelError
from service.core.events import ids
from service.core.events.events import Event, Origin
from service.core.fold.fold import fold_all
from service.core.fold.state import State
from tests.integration.test_hot_slice import append
from tests.support.eventcheck import checked_tempdir
from tests.support.strategies import histories

NOW = "2026-11-30T09:00:00.000Z"
CAPS = (
    WorkspaceConfig(),
    msgspec.convert({"caps": {"full_tokens": 40, "index_tokens": 90}}, WorkspaceConfig),
)
KINDS = ("note", "goal", "work", "claim", "decision", "question", "milestone")


@st.composite
def references(draw: st.DrawFn, known: list[str]) -> str:
    """An id, a prefix of one (short ones start many ids), another case, or no record."""
    if not known or draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(["01zzzzzzzz", "zz", "", " ", "Q!", "0"]))
    chosen = draw(st.sampled_from(known))
    cut = draw(st.sampled_from([len(chosen), len(chosen), 12, 10, 8, 3, 1]))
    shown = chosen[:cut]
    return shown.upper() if draw(st.integers(0, 7)) == 0 else shown


@st.composite
def commands(draw: st.DrawFn, known: list[str]) -> rq.AnyCommand:
    ref = references(known)
    some = st.lists(ref, max_size=2).map(tuple)
    why = st.none() | st.just("because")
    kind = draw(st.sampled_from(["add", "add", "add", *(c.__struct_config__.tag for c in VERBS)]))
    if kind == "add":
        label = draw(st.sampled_from(KINDS))
        fields: dict[str, Any] = {
            "text": draw(st.sampled_from(["a record", "Is it so?", "we use x", "x" * 300])),
            "labels": (label,),
            "exposure": draw(st.sampled_from([None, "full", "index", "search"])),
            "supersedes": draw(st.none() | ref),
            "demote": draw(some),
            "why": draw(why),
            "proposed": draw(st.booleans()),
        }
        if label in ("claim", "decision", "question"):
            fields["supports"] = tuple(
                ",".join(s) for s in draw(st.lists(st.lists(ref, min_size=1, max_size=2)))
            )
            fields["depends_on"] = draw(some)
            fields["answers"] = draw(some)
        return rq.Add(**fields)
    record = draw(ref)
    extra: dict[str, Any] = {
        "place": {"exposure": draw(st.sampled_from([None, "full", "index", "search"])), "why": draw(why),
                  "demote": draw(some), "priority": draw(st.none() | st.integers(0, 3))},
        "retract": {"why": "dropped"},
        "decline": {"why": draw(why)},
        "cover": {"criterion": draw(st.sampled_from(["1", "2", "tests", "docs written"]))},
        "link": {"target": draw(ref), "link_type": draw(st.sampled_from(["relates", "member-of"])),
                 "remove": draw(st.booleans())},
        "report": {"text": "progress"},
        "run-exited": {"code": 0},
        "assess": {"state": draw(st.sampled_from(["accepted", "refuted", "unassessed"]))},
        "done": {"report": draw(st.none() | st.just("done: green"))},
    }.get(kind, {})  # fmt: skip
    if kind in UNIT_VERBS:
        extra["unit"] = draw(st.booleans())
    return msgspec.convert({"command": kind, "record": record, **extra}, rq.AnyCommand)


VERBS = (
    rq.Place, rq.Confirm, rq.Decline, rq.Retract, rq.Start, rq.Block, rq.Unblock, rq.Done, rq.Retire,
    rq.Restore, rq.Cover, rq.Link, rq.Report, rq.RunStarted, rq.RunExited, rq.Assess, rq.Revoke, rq.Review,
)  # fmt: skip
UNIT_VERBS = {c.__struct_config__.tag for c in VERBS if issubclass(c, rq.UnitVerb)}


def outcome(state: State, config: WorkspaceConfig, command: rq.AnyCommand) -> object:
    """The events `handle` returns (ids from one fixed sequence), or the refusal's every part."""
    issued = iter(ids.next_id(None, 1_900_000_000_000 + n, n) for n in range(100))
    clock = Clock(lambda: next(issued), NOW, Origin("agent", True), "app")
    try:
        events: list[Event] = handle(state, config, clock, command)
    except ModelError as exc:
        return (type(exc).__name__, exc.code, exc.fields, str(exc), exc.about)
    return msgspec.json.encode(events)


def _line(event_id: str, kind: str, payload: dict[str, Any]) -> Event:
    return Event(
        event_id, NOW, kind, Origin("human", True), "app", msgspec.Raw(msgspec.json.encode(payload)), None
    )


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    events=histories(max_steps=40),
    cut=st.integers(0, 40),
    rewrite=st.sampled_from([1, 10**6]),
)
def test_a_command_on_the_slice_gives_what_it_gives_on_the_whole_state(
    data: st.DataObject, events: list[Event], cut: int, rewrite: int
) -> None:
    kept = hot_cache.REWRITE_TAIL
    hot_cache.REWRITE_TAIL = rewrite  # 1: each tail written back; 10**6: records that left stay unsaved
    try:
        with checked_tempdir() as tmp:
            root = Path(tmp)
            cut = min(cut, len(events))
            append(root, events[:cut])
            hot_cache.hot(root, "app")  # the slice as it was, then the rest appended after it
            append(root, events[cut:])
            whole = fold_all(events)
            known = sorted(whole.entities)
            for _ in range(6):
                command = data.draw(commands(known))
                config = data.draw(st.sampled_from(CAPS))
                names = rq.named(command)
                viewed = None if names is None else hot_cache.view(root, "app", names)
                if viewed is None:
                    continue  # the transaction reads the whole state
                assert outcome(viewed[0], config, command) == outcome(fold_all(events), config, command)
    finally:
        hot_cache.REWRITE_TAIL = kept


def test_a_prefix_starting_many_cold_ids_reads_the_whole_state() -> None:
    with checked_tempdir() as tmp:
        root = Path(tmp)
        made: list[Event] = []
        last = None
        for n in range(hot_cache.MAX_NAMED + 2):
            last = ids.next_id(last, 1_800_000_000_000, n)
            payload = {"entity": last, "text": f"r{n}", "labels": ["note"], "links": [], "criteria": [],
                       "exposure": "search", "priority": None}  # fmt: skip
            made.append(_line(last, "entity.confirmed", payload))
        append(root, made)
        shared = made[0].id[:10]
        assert hot_cache.view(root, "app", [shared]) is None
        viewed = hot_cache.view(root, "app", [made[3].id])
        assert viewed is not None and made[3].id in viewed[0].entities


def test_a_record_brought_into_the_slice_is_read_as_it_is_now_not_as_it_left() -> None:
    """A cold record made hot keeps its old row in the table; a command naming it reads the
    record the slice holds (before, the row read by prefix replaced it)."""
    with checked_tempdir() as tmp:
        root = Path(tmp)
        record = ids.next_id(None, 1_800_000_000_000, 0)
        payload = {"entity": record, "text": "r", "labels": ["note"], "links": [], "criteria": [],
                   "exposure": "search", "priority": None}  # fmt: skip
        append(root, [_line(record, "entity.confirmed", payload)])
        assert record not in hot_cache.hot(root, "app").state.entities
        placed = ids.next_id(record, 1_800_000_000_001, 1)
        moved = {"entity": record, "exposure": "full", "why": "shown"}
        append(root, [_line(placed, "entity.placed", moved)])
        for prefix in (record, record[:12]):
            viewed = hot_cache.view(root, "app", [prefix])
            assert viewed is not None and viewed[0].entities[record].exposure == "full"


@pytest.mark.parametrize("rewrite", [1, 10**6])
@pytest.mark.parametrize("exposure", ["full", "search"])
def test_a_unit_s_reports_come_with_it_in_and_out_of_the_slice(
    exposure: str, rewrite: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The slice holds no reports: a done folded into it, and a done a command issues on it,
    read the unit's reports from beside the cold records, whether the unit is in the slice
    (full) or not (search), and whether the tail that filed them was written back (1) or is
    folded again by each read (10**6)."""
    monkeypatch.setattr(hot_cache, "REWRITE_TAIL", rewrite)
    with checked_tempdir() as tmp:
        root = Path(tmp)
        made = [ids.next_id(None, 1_800_000_000_000, 0)]
        for n in range(1, 5):
            made.append(ids.next_id(made[-1], 1_800_000_000_000 + n, n))
        unit, early, report, done, second = made
        payload = {"entity": unit, "text": "ship", "labels": ["work"], "links": [], "criteria": [],
                   "exposure": exposure, "priority": None}  # fmt: skip
        begun = [
            _line(unit, "entity.confirmed", payload),
            _line(early, "report.added", {"text": "begun", "work": unit}),
        ]
        append(root, begun)
        hot_cache.hot(root, "app")  # built with the first report: the second is folded into it
        evidence = {"text": "built", "work": unit, "commit": "9d2f4fc49cf782c5268b31a2e0bb8740a684c3b5"}
        append(root, [_line(report, "report.added", evidence)])
        whole = fold_all([*begun, _line(report, "report.added", evidence)])
        viewed = hot_cache.view(root, "app", [unit[:12]])
        assert viewed is not None and [r.id for r in viewed[0].reports[unit]] == [early, report]
        command = rq.Done(record=unit[:12])
        issued = outcome(viewed[0], WorkspaceConfig(), command)
        assert issued == outcome(whole, WorkspaceConfig(), command)
        assert isinstance(issued, bytes) and b"entity.done" in issued  # not refused for want of evidence
        append(root, [_line(done, "entity.done", {"entity": unit})])
        sliced = hot_cache.hot(root, "app")
        assert sliced.state.reports == {}
        assert unit not in sliced.state.entities  # done and at search or shown as done: out
        assert sliced.fetch([unit])[0].execution == "done"
        again = {"text": "after", "work": unit}
        append(root, [_line(second, "report.added", again)])
        viewed = hot_cache.view(root, "app", [unit])
        assert viewed is not None and [r.id for r in viewed[0].reports[unit]] == [early, report, second]
