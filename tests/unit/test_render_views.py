"""Row and JSON views: the `state list --json` row, order, lists, `work show`."""

from __future__ import annotations

import msgspec

from service.core.events.events import (
    Blocked,
    Covered,
    EntityWhy,
    Link,
    Placed,
    ReportAdded,
    RunExited,
    RunStarted,
)
from service.core.fold.state import Entity, State
from service.core.projections.views import (
    ROW_KEYS,
    entity_row,
    list_line,
    list_rows,
    ordered,
    process_word,
    show_text,
    work_list,
    work_list_text,
    work_show,
    work_show_text,
)
from tests.support.builders import AGENT, Log


def test_entity_row_has_exactly_the_contract_keys() -> None:
    log = Log()
    old = log.entity("use tabs", "convention", exposure="full", priority=30)
    new = log.entity(
        "use spaces",
        "convention",
        exposure="full",
        priority=30,
        why="pep8",
        links=(Link("supersedes", old),),
        criteria=("lint passes",),
        target="2099-01-01",
    )
    state = log.state()
    row = entity_row(state.entities[new], "short")
    assert tuple(row) == ROW_KEYS
    assert row["status"] == "confirmed"
    assert row["supersedes"] == [old]
    assert row["links"] == [{"type": "supersedes", "target": old}]
    assert row["criteria"] == ["lint passes"] and row["covered"] == []
    assert row["pending"] is False
    assert entity_row(state.entities[old], "s")["superseded_by"] == new
    assert entity_row(state.entities[old], "s")["status"] == "superseded"
    msgspec.json.encode(row)  # JSON-able


def test_pending_is_true_for_proposals_and_waiting_placements() -> None:
    log = Log()
    proposal = log.entity("add a cache", "decision", proposed=True)
    placed = log.entity("tabs", "convention", exposure="full")
    log.add("entity.placed", Placed(entity=placed, exposure="index", why="stale"), AGENT)
    state = log.state()
    assert entity_row(state.entities[proposal], "p")["pending"] is True
    assert entity_row(state.entities[placed], "p")["pending"] is True


def order_key(e: Entity) -> tuple[object, ...]:
    """The render order spelled as one key: priority ascending (none last), then the most
    recently created first (descending id order as an ascending key)."""
    return (e.priority is None, e.priority or 0, *(-ord(c) for c in e.created), 1)


def test_order_is_priority_then_most_recent_first() -> None:
    log = Log()
    a = log.entity("a", "decision", exposure="index", priority=40)
    b = log.entity("b", "idea")
    c = log.entity("c", "decision", exposure="index", priority=40)
    d = log.entity("d", "goal", exposure="full", priority=0)
    e = log.entity("e", "note")
    state = log.state()
    expected = [d, c, a, e, b]
    assert [x.id for x in ordered(state.entities.values())] == expected
    assert [x.id for x in sorted(state.entities.values(), key=order_key)] == expected


def test_list_rows_live_by_default_every_record_with_all() -> None:
    log = Log()
    keep = log.entity("keep", "note")
    gone = log.entity("gone", "note")
    log.add("entity.retracted", EntityWhy(entity=gone, why="wrong"))
    state = log.state()
    assert [e.id for e in list_rows(state, False)] == [keep]
    assert {e.id for e in list_rows(state, True)} == {keep, gone}
    shorts = {keep: "k", gone: "g"}
    lines = [list_line(e, shorts[e.id]) for e in list_rows(state, True)]
    assert "g  note  search  gone  (retracted)" in lines


def test_show_text_lists_fields_and_waiting_placements() -> None:
    log = Log()
    e = log.entity("tabs", "convention", exposure="full", priority=30)
    log.add("entity.placed", Placed(entity=e, exposure="index", why="rarely needed"), AGENT)
    text = show_text(log.state().entities[e], "abc")
    assert text.startswith(f"{e}  [convention]  tabs\n")
    assert "  exposure: full\n" in text
    assert "  waiting placement: index\n" in text


def _work() -> tuple[Log, str, str]:
    log = Log()
    milestone = log.entity("two clones converge", "milestone", criteria=("tests", "docs"))
    unit = log.entity("write the merge", "work", links=(Link("member-of", milestone),))
    log.add("entity.started", EntityWhy(entity=unit))
    return log, milestone, unit


def test_work_show_refuses_without_evidence_then_accepts_a_commit() -> None:
    log, _, unit = _work()
    doc = work_show(log.state(), unit)
    assert doc["execution"] == "in-progress"
    assert doc["evidence"]["judgement"] == "refused"
    assert "no evidence" in doc["evidence"]["refusal"]
    log.add("report.added", ReportAdded(text="merged", work=unit, commit="abc123"))
    doc = work_show(log.state(), unit)
    assert doc["reports"][0]["commit"] == "abc123"
    assert doc["evidence"] == {"judgement": "ready", "refusal": None}
    assert "evidence: sufficient" in work_show_text(doc)


def test_work_show_criteria_gate_and_done() -> None:
    log, milestone, unit = _work()
    log.add("report.added", ReportAdded(text="half", work=milestone, artifact="out.txt"))
    doc = work_show(log.state(), milestone)
    assert "uncovered criteria" in doc["evidence"]["refusal"]
    assert doc["members"] == [unit]
    log.add("entity.covered", Covered(entity=milestone, criterion="tests"))
    log.add("entity.covered", Covered(entity=milestone, criterion="docs"))
    log.add("entity.done", EntityWhy(entity=milestone))
    doc = work_show(log.state(), milestone)
    assert doc["execution"] == "done"
    assert doc["evidence"]["judgement"] == "done"
    assert doc["criteria"] == [
        {"criterion": "tests", "covered": True},
        {"criterion": "docs", "covered": True},
    ]
    text = work_show_text(doc)
    assert "criterion [x] tests" in text and "evidence: accepted (done)" in text


def test_work_show_runs_combine_log_and_local_liveness() -> None:
    log, _, unit = _work()
    log.add("work.run-started", RunStarted(work=unit))
    doc = work_show(log.state(), unit, {unit: "running"})
    assert doc["runs"][0]["local"] == "running" and doc["runs"][0]["exited"] is None
    assert "process: running" in work_show_text(doc)
    log.add("work.run-exited", RunExited(work=unit, code=3))
    assert "process: exited (code 3)" in work_show_text(work_show(log.state(), unit, {unit: "exited"}))
    assert process_word(None, "stale").startswith("stale")
    assert process_word(None, None) == "started (no local process record)"


def test_work_show_unknown_id_is_invalid() -> None:
    import pytest

    from service.core.errors import Invalid

    with pytest.raises(Invalid):
        work_show(State(), "nope")


def test_work_list_open_units_and_done_count() -> None:
    log, _, unit = _work()
    other = log.entity("write the docs", "work")
    log.add("entity.blocked", Blocked(entity=other, on="dependency"))
    later = log.entity("polish", "work")
    done = log.entity("spike", "work")
    log.add("report.added", ReportAdded(text="done", work=done, commit="c1"))
    log.add("entity.done", EntityWhy(entity=done))
    doc = work_list(log.state())
    assert [u["id"] for u in doc["units"]] == [unit, other, later]
    assert (doc["open"], doc["done"]) == (3, 1)
    msgspec.json.encode(doc)
    shorts = {u["id"]: u["short"] for u in doc["units"]}
    assert work_list_text(doc).splitlines() == [
        f"{shorts[unit]}  in-progress  write the merge",
        f"{shorts[other]}  blocked (on dependency)  write the docs",
        f"{shorts[later]}  next  polish",
        "(1 done — `self work list --all` lists them)",
        "3 open work units",
    ]
    every = work_list(log.state(), all_=True)
    assert [u["word"] for u in every["units"]][-1] == "done"
    assert not work_list_text(every).count("lists them")
