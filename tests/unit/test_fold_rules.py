"""The lifecycle rules of the fold, one small named scenario each, and the fold of a real
Superself store against what Superself itself printed for it."""

from __future__ import annotations

import msgspec
import pytest

from service.core.events import ids
from service.core.events.events import Event, Origin, decode_line
from service.core.fold.fold import fold_all
from service.core.fold.state import Entity, State
from tests.support.builders import as_imported
from tests.support.samples import SUPERSELF_SAMPLE as SAMPLE
from tests.support.samples import SUPERSELF_SAMPLE_LOG as SAMPLE_LOG

START_MS = 1_780_000_000_000


class Log:
    """A project log written in order, with ids from the clock and readable entity ids."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.last: str | None = None
        self.now = START_MS

    def add(
        self,
        kind: str,
        payload: dict[str, object],
        *,
        confirmed: bool = True,
        refs: dict[str, object] | None = None,
        same_ts: bool = False,
    ) -> str:
        if not same_ts:
            self.now += 1000
        event_id = ids.next_id(self.last, self.now, 0)
        self.last = event_id
        ts = f"2026-06-01T00:{self.now // 60000 % 60:02d}:{self.now // 1000 % 60:02d}.000Z"
        if same_ts and self.events:
            ts = self.events[-1].ts
        origin = Origin("human" if confirmed else "agent", confirmed)
        raw = msgspec.Raw(msgspec.json.encode(payload, order="sorted"))
        self.events.append(Event(event_id, ts, kind, origin, "app", raw, refs))
        return event_id

    def record(self, entity: str, text: str, **fields: object) -> None:
        """A confirmed record (entity.confirmed with text)."""
        confirmed = bool(fields.pop("confirmed", True))
        kind = "entity.confirmed" if confirmed else "entity.proposed"
        self.add(kind, {"entity": entity, "text": text, **fields}, confirmed=confirmed)

    def state(self) -> State:
        return fold_all(self.events)


def signals(state: State, kind: str) -> list[str | None]:
    return [s.entity for s in state.signals if s.kind == kind]


# --- supersession ----------------------------------------------------------------------


def test_supersession_keeps_lineage_and_waits_for_confirmation() -> None:
    log = Log()
    log.record("d-a", "merge by rebase", labels=["decision"])
    log.record(
        "d-b",
        "merge with union",
        labels=["decision"],
        links=[{"type": "supersedes", "target": "d-a"}],
        confirmed=False,
    )
    proposed = log.state()
    assert proposed.entities["d-a"].status == "confirmed"  # a proposal replaces nothing yet
    assert proposed.entities["d-b"].status == "proposed"

    log.add("entity.confirmed", {"entity": "d-b"})
    state = log.state()
    old, new = state.entities["d-a"], state.entities["d-b"]
    assert (old.status, old.superseded_by, old.live) == ("superseded", "d-b", False)
    assert (new.status, new.supersedes, new.live) == ("confirmed", ["d-a"], True)
    assert old.text == "merge by rebase"  # history stays whole


def test_supersession_only_replaces_live_records() -> None:
    log = Log()
    log.record("c-a", "tabs")
    log.add("entity.retracted", {"entity": "c-a", "why": "wrong"})
    log.record("c-b", "spaces", links=[{"type": "supersedes", "target": "c-a"}])
    log.add("entity.superseded", {"entity": "c-a", "by": "c-b"})
    state = log.state()
    assert state.entities["c-a"].status == "retracted"
    assert state.entities["c-a"].superseded_by is None
    assert signals(state, "not-live") == ["c-a", "c-a"]


def test_explicit_supersede_event() -> None:
    log = Log()
    log.record("g-a", "first goal")
    log.record("g-b", "second goal")
    log.add("entity.superseded", {"entity": "g-a", "by": "g-b", "why": "pivot"})
    old = log.state().entities["g-a"]
    assert (old.status, old.superseded_by, old.closed_why) == ("superseded", "g-b", "pivot")


def test_a_superseding_revision_starts_with_criteria_uncovered() -> None:
    log = Log()
    log.record("m-a", "two clones converge", criteria=["tests pass", "docs written"])
    log.add("entity.covered", {"entity": "m-a", "criterion": "tests pass"})
    log.record(
        "m-b",
        "two clones converge, offline too",
        criteria=["tests pass", "docs written"],
        links=[{"type": "supersedes", "target": "m-a"}],
    )
    state = log.state()
    assert state.entities["m-a"].covered == ["tests pass"]
    assert state.entities["m-b"].covered == []


# --- retraction ------------------------------------------------------------------------


def test_retraction_is_terminal() -> None:
    log = Log()
    log.record("d-x", "add a cache", confirmed=False, exposure="index")
    log.add("entity.retracted", {"entity": "d-x", "why": "not needed"})
    log.add("entity.confirmed", {"entity": "d-x"})
    log.add("entity.placed", {"entity": "d-x", "exposure": "full", "priority": 1})
    log.record("d-x", "add a cache again")
    log.add("entity.restored", {"entity": "d-x"})
    entity = log.state().entities["d-x"]
    assert (entity.status, entity.exposure, entity.priority) == ("retracted", "index", None)
    assert entity.text == "add a cache"
    assert entity.closed_why == "not needed"
    assert not entity.live


# --- done is gated on evidence ---------------------------------------------------------


def work_log(criteria: list[str] | None = None) -> Log:
    log = Log()
    log.record("w-1", "write the merge", labels=["work"], criteria=criteria or [])
    log.add("entity.started", {"entity": "w-1"})
    return log


def test_done_without_evidence_is_refused() -> None:
    log = work_log()
    log.add("report.added", {"text": "some progress"}, refs={"work": "w-1"})
    log.add("entity.done", {"entity": "w-1"})
    state = log.state()
    assert state.entities["w-1"].execution == "in-progress"
    assert signals(state, "done-refused") == ["w-1"]


def test_done_with_uncovered_criteria_is_refused() -> None:
    log = work_log(["tests pass", "docs written"])
    log.add("entity.covered", {"entity": "w-1", "criterion": "tests pass"})
    merged = {"text": "merged", "commit": "9d2f4fc49cf782c5268b31a2e0bb8740a684c3b5"}
    log.add("report.added", merged, refs={"work": "w-1"})
    log.add("entity.done", {"entity": "w-1"})
    state = log.state()
    assert state.entities["w-1"].execution == "in-progress"
    [refusal] = [s for s in state.signals if s.kind == "done-refused"]
    assert "docs written" in refusal.detail

    log.add("entity.covered", {"entity": "w-1", "criterion": "docs written"})
    log.add("entity.done", {"entity": "w-1"})
    assert log.state().entities["w-1"].execution == "done"


@pytest.mark.parametrize(
    "report",
    [
        {"text": "merged", "commit": "9d2f4fc49cf782c5268b31a2e0bb8740a684c3b5"},
        {"text": "built the wheel", "artifact": "dist/app-1.0.whl"},
    ],
    ids=["commit", "artifact"],
)
def test_done_with_a_commit_or_artifact_report(report: dict[str, object]) -> None:
    log = work_log()
    log.add("report.added", report, refs={"work": "w-1"})
    log.add("entity.done", {"entity": "w-1", "why": "shipped"})
    entity = log.state().entities["w-1"]
    assert (entity.execution, entity.closed_why, entity.live) == ("done", "shipped", False)


def test_done_with_a_done_time_report() -> None:
    log = work_log()
    log.add("report.added", {"text": "merge landed with tests", "work": "w-1"})
    log.add("entity.done", {"entity": "w-1"}, same_ts=True)
    assert log.state().entities["w-1"].execution == "done"


def test_a_report_for_other_work_is_no_evidence() -> None:
    log = work_log()
    log.add("report.added", {"text": "merged", "artifact": "dist/x.whl"}, refs={"work": "w-2"})
    log.add("entity.done", {"entity": "w-1"})
    assert log.state().entities["w-1"].execution == "in-progress"


def test_done_then_restored_then_blocked() -> None:
    log = work_log()
    log.add("report.added", {"text": "done", "artifact": "dist/x.whl"}, refs={"work": "w-1"})
    log.add("entity.done", {"entity": "w-1"})
    log.add("entity.blocked", {"entity": "w-1", "on": "review"})  # closed: ignored
    assert log.state().entities["w-1"].execution == "done"
    log.add("entity.restored", {"entity": "w-1"})
    log.add("entity.blocked", {"entity": "w-1", "on": "review"})
    entity = log.state().entities["w-1"]
    assert (entity.execution, entity.blocked_on) == ("blocked", "review")
    log.add("entity.unblocked", {"entity": "w-1"})
    assert log.state().entities["w-1"].execution == "in-progress"


# --- placement waiting on a person -----------------------------------------------------


def test_an_unconfirmed_placement_waits_for_confirmation() -> None:
    log = Log()
    log.record("c-1", "events are never edited", exposure="full", priority=30)
    log.add("entity.placed", {"entity": "c-1", "exposure": "index", "why": "room"}, confirmed=False)
    waiting = log.state().entities["c-1"]
    assert waiting.exposure == "full"
    assert [(p.exposure, p.why) for p in waiting.pending] == [("index", "room")]

    log.add("entity.confirmed", {"entity": "c-1"})
    placed = log.state().entities["c-1"]
    assert (placed.exposure, placed.priority, placed.pending) == ("index", 30, [])


def test_a_confirmed_placement_applies_at_once() -> None:
    log = Log()
    log.record("c-1", "tabs", exposure="full")
    log.add("entity.placed", {"entity": "c-1", "exposure": "search", "priority": 5})
    entity = log.state().entities["c-1"]
    assert (entity.exposure, entity.priority, entity.pending) == ("search", 5, [])


def paired_log() -> Log:
    """An agent adds n-new and demotes c-old to make room: one pair waiting on a person."""
    log = Log()
    log.record("c-old", "old convention", exposure="full", priority=30)
    log.record("n-new", "new convention", exposure="full", priority=30, confirmed=False)
    log.add(
        "entity.placed",
        {"entity": "c-old", "exposure": "index", "pair": "n-new", "why": "room for n-new"},
        confirmed=False,
    )
    return log


def test_a_paired_placement_applies_when_its_entity_is_confirmed() -> None:
    log = paired_log()
    before = log.state()
    assert before.entities["c-old"].exposure == "full"
    assert [p.pair for p in before.entities["c-old"].pending] == ["n-new"]

    log.add("entity.confirmed", {"entity": "n-new"})
    state = log.state()
    assert state.entities["n-new"].status == "confirmed"
    assert (state.entities["c-old"].exposure, state.entities["c-old"].pending) == ("index", [])


@pytest.mark.parametrize("decline", ["entity.retracted", "entity.superseded"])
def test_declining_the_add_declines_its_paired_placement(decline: str) -> None:
    log = paired_log()
    log.add(decline, {"entity": "n-new", "why": "not now"})
    log.add("entity.confirmed", {"entity": "c-old"})
    old = log.state().entities["c-old"]
    assert (old.exposure, old.pending) == ("full", [])


# --- what the fold does not understand -------------------------------------------------


def test_unknown_types_are_counted_and_kept() -> None:
    log = Log()
    log.add("zz.from-the-future", {"anything": 1})
    log.add("also.unknown", {})
    log.record("e-1", "still folds")
    state = log.state()
    assert (state.unknown, state.events, len(state.entities)) == (2, 3, 1)


def test_a_malformed_payload_is_a_signal_and_folding_continues() -> None:
    log = Log()
    log.record("e-1", "a record", exposure="search")
    bad = log.add("entity.placed", {"entity": "e-1", "priority": "high"})
    log.add("entity.placed", {"entity": "e-1", "exposure": "index"})
    state = log.state()
    [signal] = [s for s in state.signals if s.kind == "malformed-payload"]
    assert signal.event == bad
    assert state.entities["e-1"].exposure == "index"
    assert state.events == 3


def test_events_naming_no_record_are_signals() -> None:
    log = Log()
    log.add("entity.started", {"entity": "w-ghost"})
    log.add("entity.confirmed", {"entity": "w-ghost"})
    assert signals(log.state(), "unknown-entity") == ["w-ghost", "w-ghost"]


# --- legacy Superself kinds ------------------------------------------------------------


def test_legacy_goal_set_supersedes_the_previous_goal() -> None:
    log = Log()
    first = log.add("goal.set", {"text": "ship the alpha"})
    second = log.add("goal.set", {"text": "ship the beta"})
    state = log.state()
    old, new = state.entities[first], state.entities[second]
    assert (old.status, old.superseded_by) == ("superseded", second)
    assert (new.status, new.labels) == ("confirmed", ["goal"])
    assert (new.exposure, new.priority) == ("full", 0)
    assert new.supersedes == [first]
    assert [e.id for e in state.live()] == [second]


def test_legacy_decision_convention_and_work() -> None:
    """Superself's own shapes: records named by event id or by the id in the payload, and
    withdrawals naming them in refs (every kind: tests/unit/test_superself_legacy.py)."""
    log = Log()
    decision = log.add("decision.proposed", {"text": "store JSONL"}, confirmed=False)
    log.add("decision.confirmed", {}, refs={"confirms": decision})
    tabs = log.add("convention.added", {"text": "tabs"})
    log.add("convention.dropped", {"why": "spaces now"}, refs={"supersedes": [tabs]})
    log.add("objective.created", {"objective": "o-1", "outcome": "ship sync", "target": "2099-03-31"})
    milestone = {"objective": "o-1", "milestone": "m-1", "outcome": "converge"}
    log.add("milestone.created", {**milestone, "exit": [{"id": "c1", "text": "tests pass"}]})
    log.add("work.created", {"work": "w-1", "outcome": "write the merge"})
    log.add("work.linked", {"work": "w-1", "milestone": "m-1"})
    log.add("work.started", {"work": "w-1"})
    log.add("work.done", {"work": "w-1"})
    state = fold_all(as_imported(log.events))  # as `self import superself` brings them over
    e = state.entities
    assert (e[decision].status, e[decision].exposure, e[decision].priority) == ("confirmed", "index", 40)
    assert (e[tabs].status, e[tabs].closed_why) == ("retracted", "spaces now")
    assert (e["o-1"].target, e["o-1"].priority) == ("2099-03-31", 10)
    assert (e["m-1"].criteria, e["m-1"].links[0].target) == (["tests pass"], "o-1")
    assert e["w-1"].links[0].target == "m-1"
    assert e["w-1"].execution == "done"  # judged by Superself's verb, vouched for: no gate reruns
    assert state.signals == []
    unvouched = log.state()  # the same events, no import's voucher: a done like any other
    assert unvouched.entities["w-1"].execution == "in-progress"
    assert signals(unvouched, "done-refused") == ["w-1"]


# --- the real Superself sample ---------------------------------------------------------


@pytest.fixture(scope="module")
def sample() -> State:
    lines = SAMPLE_LOG.read_bytes().splitlines()
    return fold_all(decode_line(line) for line in lines if line.strip())


def expected_rows() -> list[tuple[str, str, str, int | None, str, bool]]:
    """(id, label, exposure, priority, text, proposed) from `self state` as Superself printed it."""
    rows = []
    for line in (SAMPLE / "expected" / "state-list.txt").read_text().splitlines():
        parts = line.split("  ")
        if len(parts) < 4:
            continue
        entity_id, label, placement, text = parts[:4]
        exposure, _, priority = placement.partition(" p")
        proposed = parts[4:] == ["(proposed)"]
        rows.append((entity_id, label, exposure, int(priority) if priority else None, text, proposed))
    return rows


def test_sample_live_records_match_superself(sample: State) -> None:
    rows = expected_rows()
    assert len(rows) == 12
    live: dict[str, Entity] = {e.id: e for e in sample.live()}
    assert sorted(live) == sorted(r[0] for r in rows)
    for entity_id, label, exposure, priority, text, proposed in rows:
        e = live[entity_id]
        assert (e.labels[0] if e.labels else "-") == label, entity_id
        assert (e.exposure, e.priority, e.text) == (exposure, priority, text), entity_id
        assert (e.status == "proposed") == proposed, entity_id


def test_sample_targets_criteria_work_and_runs(sample: State) -> None:
    e = sample.entities
    assert e["o-vjaax"].target == "2099-03-31"
    assert e["m-kshe3"].criteria == ["concurrency test passes", "docs written"]
    assert e["m-kshe3"].covered == ["concurrency test passes"]
    assert (e["w-x0w0a"].execution, e["w-x0w0a"].live) == ("done", False)
    assert (e["w-s7h2x"].execution, e["w-s7h2x"].blocked_on) == ("blocked", "dependency")
    run = sample.runs["w-s7h2x"]
    assert (run.exited is not None, run.code) == (True, 0)
    assert [r.text for r in sample.reports["w-x0w0a"]] == [
        "merge written; tests green",
        "merge landed with tests",
    ]
    assert (sample.events, sample.unknown, sample.signals) == (22, 0, [])
