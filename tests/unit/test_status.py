"""Status: goal, work counts, progress, waiting, unknown events, health, processes."""

from __future__ import annotations

import msgspec

from service.core.events.events import (
    Blocked,
    Covered,
    EntityWhy,
    Link,
    Placed,
    RunExited,
    RunStarted,
)
from service.core.fold.state import State
from service.core.projections.status import build_status, render_status, waiting_count, work_counts
from tests.support.builders import AGENT, Log

TODAY = "2026-12-01"


def test_empty_project_status() -> None:
    doc = build_status("app", State(), {}, [], TODAY)
    assert doc.goal is None
    assert render_status(doc).splitlines() == [
        'app — goal: none set (`self goal "..."` sets one)',
        "work: 0 active, 0 blocked, 0 next, 0 done",
        "objectives: 0 open, 0 of 0 milestones reached, 0 of 0 exit criteria covered",
        "waiting on you: 0",
        "health: ok",
    ]


def test_work_counts_by_execution() -> None:
    log = Log()
    active = log.entity("a", "work")
    log.add("entity.started", EntityWhy(entity=active))
    blocked = log.entity("b", "work")
    log.add("entity.blocked", Blocked(entity=blocked, on="review"))
    log.entity("c", "work")
    log.entity("d", "work")
    done = log.entity("e", "work")
    log.done(done)
    retired = log.entity("f", "work")
    log.add("entity.retired", EntityWhy(entity=retired, why="dropped"))
    log.entity("h", "work", proposed=True)  # not work until confirmed, as in Superself
    declined = log.entity("i", "work", proposed=True)
    log.add("entity.retracted", EntityWhy(entity=declined))  # never confirmed: never work
    counts = work_counts(log.state())
    assert (counts.active, counts.blocked, counts.next, counts.done, counts.retired) == (1, 1, 2, 1, 1)
    assert "work: 1 active, 1 blocked, 2 next, 1 done, 1 retired" in render_status(
        build_status("app", log.state(), {}, [], TODAY)
    )


def test_goal_is_the_current_one_after_supersession() -> None:
    log = Log()
    old = log.entity("old goal", "goal", exposure="full", priority=0)
    log.entity("new goal", "goal", exposure="full", priority=0, links=(Link("supersedes", old),))
    log.entity("a proposed goal", "goal", proposed=True, exposure="full", priority=0)
    assert build_status("app", log.state(), {}, [], TODAY).goal == "new goal"


def test_objectives_milestones_and_criteria() -> None:
    """Superself's reading: the milestones of open objectives (a dropped or superseded one
    included), the exit criteria of those not superseded, and an open objective's own
    criteria; a work unit's requirements, a closed objective and a milestone under no
    objective do not count."""
    log = Log()
    ship = log.entity("ship", "objective", target="2099-01-01", criteria=("tagged",))
    under = (Link("member-of", ship),)
    reached = log.entity("alpha", "milestone", criteria=("a",), links=under)
    log.add("entity.covered", Covered(entity=reached, criterion="a"))
    log.done(reached)
    open_one = log.entity("beta", "milestone", criteria=("b", "c"), links=under)
    log.add("entity.covered", Covered(entity=open_one, criterion="c"))
    dropped = log.entity("gamma", "milestone", criteria=("d",), links=under)
    log.add("entity.retracted", EntityWhy(entity=dropped, why="not needed"))
    old = log.entity("delta", "milestone", criteria=("e",), links=under)
    log.entity("delta, later", "milestone", links=(*under, Link("supersedes", old)))
    log.entity("loose", "milestone", criteria=("f",))
    log.entity("a unit", "work", criteria=("g",), links=under)
    closed = log.entity("old objective", "objective")
    log.entity("its milestone", "milestone", criteria=("h",), links=(Link("member-of", closed),))
    log.done(closed)
    doc = build_status("app", log.state(), {}, [], TODAY)
    assert doc.objectives_open == 1
    assert (doc.milestones_reached, doc.milestones_total) == (1, 5)
    assert (doc.criteria_covered, doc.criteria_total) == (2, 5)
    assert "objectives: 1 open, 1 of 5 milestones reached, 2 of 5 exit criteria covered" in render_status(doc)


def test_waiting_counts_proposals_and_each_waiting_placement() -> None:
    log = Log()
    log.entity("add a cache", "decision", proposed=True)
    placed = log.entity("tabs", "convention", exposure="full")
    log.add("entity.placed", Placed(entity=placed, exposure="index", why="a"), AGENT)
    log.add("entity.placed", Placed(entity=placed, priority=90, why="b"), AGENT)
    assert waiting_count(log.state()) == 3
    assert "waiting on you: 3" in render_status(build_status("app", log.state(), {}, [], TODAY))


def test_overdue_unknown_health_and_quarantine_lines() -> None:
    log = Log()
    late = log.entity("ship the alpha", "objective", target="2026-11-01")
    log.add("entity.done", EntityWhy(entity=late))  # refused: no evidence
    log.add("vendor.thing", b'{"x":1}')
    doc = build_status("app", log.state(), {}, [("projects/app/log/000000.jsonl", 7, "not JSON")], TODAY)
    assert doc.unknown == 1
    assert [d.text for d in doc.overdue] == ["ship the alpha"]
    text = render_status(doc)
    assert "overdue: 2026-11-01 [objective] ship the alpha" in text
    assert "unknown event types: 1 event kept, not folded" in text
    assert "health: 2 signals" in text
    assert f"  - done-refused at {log.events[1].id} ({late}): " in text
    assert "  - quarantined at projects/app/log/000000.jsonl:7: not JSON" in text
    msgspec.json.encode(doc)


def test_process_lines_combine_the_log_and_local_liveness() -> None:
    log = Log()
    exited = log.entity("exited one", "work")
    log.add("work.run-started", RunStarted(work=exited))
    log.add("work.run-exited", RunExited(work=exited, code=0))
    stale = log.entity("stale one", "work")
    log.add("entity.started", EntityWhy(entity=stale))
    log.add("work.run-started", RunStarted(work=stale))
    elsewhere = log.entity("remote one", "work")
    log.add("work.run-started", RunStarted(work=elsewhere))
    finished = log.entity("finished", "work")
    log.add("work.run-started", RunStarted(work=finished))
    log.add("work.run-exited", RunExited(work=finished, code=0))
    log.done(finished)
    runs = {stale: "stale", elsewhere: "other-machine"}
    doc = build_status("app", log.state(), runs, [], TODAY)
    words = {p.work: p.state for p in doc.processes}
    assert words == {
        exited: "exited (code 0)",
        stale: "stale: no live process and no recorded exit",
        elsewhere: "started on another machine",
    }
    assert all(p.short == p.work[:8] for p in doc.processes)
    assert f"process {exited[:8]}: exited (code 0)" in render_status(doc)
