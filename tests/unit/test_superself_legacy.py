"""Stores in Superself's pre-entity grammar fold as Superself folds them.

Two logs under `tests/fixtures/superself-legacy/` (see the README there):

- `pre-cutover/` is Superself's own fixture of an old store, with what Superself printed for
  it; the expectations below are parsed from those printouts.
- `lifecycle/` is written here in exactly the shapes Superself's verbs wrote, one or more
  events of every legacy kind; each expectation names the rule of Superself's fold
  (`apps/cli/src/model.ts`, `objectives.ts`, `entities.ts`) it follows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest

from service.core.events.events import Blocked, Event, decode_line
from service.core.fold.fold import fold_all
from service.core.fold.state import Entity, State
from service.core.projections.status import build_status, render_status, waiting_count
from service.core.projections.views import is_pending, is_waiting
from tests.support.builders import Log, as_imported

LEGACY = Path(__file__).resolve().parents[1] / "fixtures" / "superself-legacy"
PRE = LEGACY / "pre-cutover"
LIFECYCLE = LEGACY / "lifecycle"


def store_events(root: Path) -> list[Event]:
    lines = (root / "store" / "projects" / "demo" / "log.jsonl").read_bytes().splitlines()
    return [decode_line(line) for line in lines if line.strip()]


def fold_store(root: Path) -> State:
    """The store's log as `self import superself` brings it over (each event marked, the
    import's voucher naming the dones), folded."""
    return fold_all(as_imported(store_events(root)))


def ids_of(root: Path) -> dict[str, str]:
    """The event id of each record the lifecycle log names by its first text."""
    found = {}
    for line in (root / "store" / "projects" / "demo" / "log.jsonl").read_text().splitlines():
        event = json.loads(line)
        text = event["payload"].get("text") or event["payload"].get("outcome")
        if text and event["type"].split(".")[0] in ("goal", "decision", "convention", "work"):
            found.setdefault(text, event["payload"].get("work") or event["id"])
    return found


def row(e: Entity) -> tuple[str, str, int | None, str, bool]:
    label = e.labels[0] if e.labels else "-"
    return (label, e.exposure, e.priority, e.text, e.status == "proposed")


# --- Superself's pre-cutover fixture ------------------------------------------------------


@pytest.fixture(scope="module")
def pre() -> State:
    return fold_store(PRE)


def printed(name: str) -> str:
    return (PRE / "expected" / name).read_text("utf-8")


def printed_state_rows() -> dict[str, tuple[str, str, int | None, str, bool]]:
    """`self state` as Superself printed it: id, label, placement, text, (proposed)."""
    rows = {}
    pattern = re.compile(r"^(\S+)  (\S+)  (full|index|search)(?: p(\d+))?  (.*?)(  \(proposed\))?$")
    for line in printed("state-list.txt").splitlines():
        match = pattern.match(line)
        assert match, line
        ident, label, exposure, priority, text, proposed = match.groups()
        rows[ident] = (label, exposure, None if priority is None else int(priority), text, bool(proposed))
    assert len(rows) == 14
    return rows


def printed_open_work() -> dict[str, tuple[str, str | None]]:
    """`self work` as Superself printed it: id → (outcome, blocked on)."""
    units = {}
    for line in printed("work-list.txt").splitlines():
        match = re.match(r"^(w-\S+)  (next|active|blocked \(on (\w+)\))  (.*?)(  \[.*\])?$", line)
        if match:
            units[match.group(1)] = (match.group(4), match.group(3))
    assert len(units) == 3
    return units


def test_pre_cutover_live_records_are_the_ones_superself_lists(pre: State) -> None:
    want = printed_state_rows()
    work = printed_open_work()
    proposal = "01kz41h20mtyytk9dt7ay013bd"  # the open work proposal Superself lists as waiting
    live = {e.id: e for e in pre.live()}
    assert set(live) == set(want) | set(work) | {proposal}
    for ident, expected in want.items():
        assert row(live[ident]) == expected, ident
    for ident, (outcome, blocked_on) in work.items():
        e = live[ident]
        assert (e.labels, e.text, e.status, e.blocked_on) == (["work"], outcome, "confirmed", blocked_on)
        assert e.execution == ("blocked" if blocked_on else None), ident
    assert (live[proposal].status, live[proposal].text) == ("proposed", "a proposed direction")


def test_pre_cutover_withdrawn_records_keep_their_reason(pre: State) -> None:
    e = pre.entities
    closed = {
        "01kz41g83gv09h6pkmn726kyzh": ("superseded", "01kz41g8sv00dfkp216h92cmxv", None),  # goal.set chain
        "01kz41ga6pj4pwzt6db7vzmcky": ("superseded", "01kz41gawfbxxbewh23ffnazr0", None),  # refs.supersedes
        "01kz41gbn0qkkx2h9p8b5atyyr": ("retracted", None, "walked back"),  # decision.retracted
        "01kz41gd13hbqebt8h12mhqk4d": ("retracted", None, "not now"),  # decision.declined
        "01kz41gf27bk44jsp0mcv74emn": ("superseded", "01kz41gfs4067wp4y8bfcxxyps", None),
        "01kz41ggehnjxbrjxp2qwycger": ("retracted", None, "spaces won"),  # convention.dropped
        "o-hftpd": ("retracted", None, "off goal"),  # objective.declined
        "o-pwwrs": ("retracted", None, "descoped"),  # objective.closed as dropped
        "e-kndgf": ("retracted", None, "done with it"),
    }
    for ident, (status, by, why) in closed.items():
        assert (e[ident].status, e[ident].superseded_by, e[ident].closed_why) == (status, by, why), ident
    assert e["01kz41gfs4067wp4y8bfcxxyps"].supersedes == ["01kz41gf27bk44jsp0mcv74emn"]
    assert e["01kz41gawfbxxbewh23ffnazr0"].supersedes == ["01kz41ga6pj4pwzt6db7vzmcky"]
    assert e["01kz41g8sv00dfkp216h92cmxv"].supersedes == ["01kz41g83gv09h6pkmn726kyzh"]


def test_pre_cutover_work_lifecycle(pre: State) -> None:
    e = pre.entities
    # work-show-done.txt: done, although no report carries a commit (legacy history is not gated)
    assert (e["w-8x0th"].execution, e["w-8x0th"].live) == ("done", False)
    assert [(r.text, r.notes) for r in pre.reports["w-8x0th"]] == [
        ("delivered as planned", ("checksum abc123",)),
        ("delivered and verified", ()),
    ]
    # work-show-retired.txt: retired, its successor named
    retired = e["w-ea6vf"]
    assert (retired.execution, retired.closed_why, retired.superseded_by) == (
        "retired",
        "superseded by the tier",
        "w-2hcs1",
    )
    # work.linked: w-2hcs1 works toward m-48nbn
    assert [(link.type, link.target) for link in e["w-2hcs1"].links] == [("member-of", "m-48nbn")]
    assert pre.signals == [] and pre.unknown == 0


def test_pre_cutover_objectives_milestones_targets_and_coverage(pre: State) -> None:
    e = pre.entities
    assert "o-tvmtf  unstarted  old target · target 2099-06-30" in printed("objective-list.txt")
    assert (e["o-tvmtf"].target, e["o-tvmtf"].why) == ("2099-06-30", "slipped")  # objective.revised
    assert e["o-yfxat"].target == "2099-01-01"
    assert e["o-93cg3"].status == "proposed"  # objective.created with proposed: true
    assert e["o-yfxat"].links == [] and e["o-93cg3"].links == []
    assert "- c1 — tests pass _(covered)_" in printed("milestone-show.txt")
    suite = e["m-48nbn"]
    assert (suite.criteria, suite.covered) == (["tests pass", "docs updated"], ["tests pass"])
    assert [(link.type, link.target) for link in suite.links] == [("member-of", "o-yfxat")]
    assert (e["m-5fcfn"].criteria, e["m-5fcfn"].covered) == (["docs live"], [])


def test_pre_cutover_waiting_items_are_superself_s(pre: State) -> None:
    section = printed("context.txt").split("## Waiting on you")[1].split("##")[0]
    assert "o-93cg3" in section and "w-0q8c9" in section and "e-cyxv4" in section
    assert "01kz41h2" in section and "e-qfffb" in section
    waiting = {e.id for e in pre.entities.values() if is_waiting(e)}
    assert waiting == {"o-93cg3", "w-0q8c9", "01kz41h20mtyytk9dt7ay013bd", "e-cyxv4", "e-qfffb"}


# --- every legacy kind, in the shapes Superself wrote ---------------------------------------


@pytest.fixture(scope="module")
def life() -> State:
    return fold_store(LIFECYCLE)


@pytest.fixture(scope="module")
def named() -> dict[str, str]:
    return ids_of(LIFECYCLE)


def test_goal_set_replaces_the_previous_goal(life: State, named: dict[str, str]) -> None:
    alpha, beta = life.entities[named["ship the alpha"]], life.entities[named["ship the beta"]]
    assert (alpha.status, alpha.superseded_by) == ("superseded", beta.id)
    assert (beta.status, beta.labels, beta.exposure, beta.priority) == ("confirmed", ["goal"], "full", 0)


def test_decisions_supersede_retract_and_decline_through_refs(life: State, named: dict[str, str]) -> None:
    e = {text: life.entities[named[text]] for text in named}
    # a proposal carries its supersedes until decision.confirmed answers it (refs.confirms)
    assert (e["use sqlite"].status, e["use postgres"].status) == ("confirmed", "superseded")
    assert e["use postgres"].superseded_by == e["use sqlite"].id
    assert (e["add redis"].status, e["add redis"].closed_why) == ("retracted", "never mind")
    # a retraction naming a record already superseded changes nothing: the first withdrawal stands
    assert (e["release weekly"].status, e["release weekly"].superseded_by) == (
        "superseded",
        e["release daily"].id,
    )
    assert (e["release daily"].exposure, e["release daily"].priority) == ("index", 40)
    assert e["use postgres"].why == "the team knows it"
    assert e["adopt graphql"].status == "proposed"


def test_conventions_dropped_through_refs_supersedes(life: State, named: dict[str, str]) -> None:
    e = {text: life.entities[named[text]] for text in named}
    black = e["black formatting"]
    assert (black.status, black.closed_why) == ("retracted", "ruff formats now")
    assert (e["old import order"].status, e["old import order"].closed_why) == ("retracted", None)
    assert (e["ruff format"].status, e["ruff format"].exposure, e["ruff format"].priority) == (
        "confirmed",
        "full",
        30,
    )


def test_objectives_confirm_revise_close_and_supersede(life: State) -> None:
    e = life.entities
    assert (e["o-b3ta1"].status, e["o-b3ta1"].superseded_by) == ("superseded", "o-b3ta2")
    assert (e["o-b3ta2"].status, e["o-b3ta2"].target, e["o-b3ta2"].supersedes) == (
        "confirmed",
        "2099-04-01",
        ["o-b3ta1"],
    )
    docs = e["o-d0cs1"]  # proposed, confirmed, revised; a decline after the confirm is no answer
    assert (docs.status, docs.text, docs.target, docs.why) == (
        "confirmed",
        "docs site and blog",
        "2099-07-01",
        "scope grew",
    )
    landed = e["o-l4nd1"]  # closed as reached
    assert (landed.status, landed.execution, landed.closed_why, landed.live) == (
        "confirmed",
        "done",
        "shipped",
        False,
    )
    assert (e["o-w1de1"].target, e["o-w1de1"].live) == (None, True)  # a revision withdrew the date
    assert (e["o-b3ta2"].exposure, e["o-b3ta2"].priority, e["o-b3ta2"].labels) == ("full", 10, ["objective"])


def test_milestones_cover_revise_reach_drop_and_supersede(life: State) -> None:
    e = life.entities
    api = e["m-ap1f1"]
    assert (api.criteria, api.covered, api.target) == (
        ["schema reviewed", "changelog written"],
        ["schema reviewed", "changelog written"],
        "2099-03-31",
    )
    assert (api.execution, api.closed_why, api.live) == ("done", "reached", False)  # milestone.reached
    assert (e["m-perf1"].status, e["m-perf1"].superseded_by, e["m-perf1"].covered) == (
        "superseded",
        "m-perf2",
        [],
    )
    perf = e["m-perf2"]
    assert (perf.status, perf.covered, perf.supersedes) == ("confirmed", ["p99 under 1s"], ["m-perf1"])
    assert ("member-of", "o-b3ta2") in [(link.type, link.target) for link in perf.links]
    assert (e["m-d3ad1"].status, e["m-d3ad1"].closed_why) == ("retracted", "no longer needed")
    assert (perf.exposure, perf.priority, perf.labels) == ("index", 20, ["milestone"])


def test_work_units_follow_the_legacy_transitions(life: State, named: dict[str, str]) -> None:
    e = life.entities
    assert (e["w-fr0z1"].execution, e["w-fr0z1"].live) == ("done", False)
    [report] = life.reports["w-fr0z1"]
    assert (report.commit, report.notes) == ("abc1234def", ("build-77", "load test ok"))
    blog = e["w-bl0g1"]
    assert [(link.type, link.target) for link in blog.links] == [("member-of", "o-d0cs1")]
    assert (blog.execution, blog.blocked_on) == ("blocked", "external")
    assert e["w-r3op1"].execution == "in-progress"  # legacy done is not terminal: a start reopens it
    assert (e["w-w41t1"].execution, e["w-w41t1"].blocked_on) == ("blocked", "decision")
    gone = e["w-ab4n1"]  # retirement is terminal: the later start and block change nothing
    assert (gone.execution, gone.closed_why) == ("retired", "moved to the blog")
    assert gone.superseded_by == "w-bl0g1"
    assert (blog.exposure, blog.priority, blog.labels, blog.status) == ("search", None, ["work"], "confirmed")


def test_work_proposals_accepted_declined_and_open(life: State, named: dict[str, str]) -> None:
    e = life.entities
    texts = ("profile the api", "rewrite in rust", "warm the cache")
    accepted, declined, open_ = (e[named[t]] for t in texts)
    assert accepted.id != "w-pr0f1" and (accepted.status, accepted.superseded_by) == ("superseded", "w-pr0f1")
    assert [(link.type, link.target) for link in e["w-pr0f1"].links] == [("member-of", "m-perf2")]
    assert (declined.status, declined.closed_why) == ("retracted", "not now")
    assert (open_.status, open_.labels, open_.links) == ("proposed", ["work"], [])


def test_lifecycle_live_set_and_waiting_items(life: State, named: dict[str, str]) -> None:
    live = {e.id for e in life.live()}
    texts = ("ship the beta", "use sqlite", "release daily", "adopt graphql", "ruff format", "warm the cache")
    assert live == {named[t] for t in texts} | {
        "o-b3ta2",
        "o-d0cs1",
        "o-w1de1",
        "m-perf2",
        "w-bl0g1",
        "w-r3op1",
        "w-w41t1",
        "w-pr0f1",
    }
    waiting = {e.id for e in life.entities.values() if is_waiting(e)}
    assert waiting == {named["adopt graphql"], named["warm the cache"], "w-w41t1"}
    # work.cancelled and work.approval-required: kept in the log, read by neither fold
    assert life.signals == [] and life.unknown == 2


def test_lifecycle_status_counts_as_superself_s_status_line(life: State) -> None:
    """Superself's `objectiveCountLine` (views.ts): the milestones of open objectives, dropped
    (m-d3ad1) and superseded (m-perf1) ones included; exit criteria of those not superseded,
    a work unit's requirements not among them. Its `countLine`: units confirmed once, a
    proposal not counted, retired ones counted."""
    doc = build_status("demo", life, {}, [], "2026-12-01")
    assert doc.objectives_open == 3
    assert (doc.milestones_reached, doc.milestones_total) == (1, 4)
    assert (doc.criteria_covered, doc.criteria_total) == (3, 5)
    w = doc.work
    assert (w.active, w.blocked, w.next, w.done, w.retired) == (1, 2, 1, 1, 1)  # w-ab4n1 retired


def test_pre_cutover_status_lines_are_superself_s(pre: State) -> None:
    ours = render_status(build_status("demo", pre, {}, [], "2026-12-01")).splitlines()
    theirs = printed("status.txt").splitlines()
    assert "work: 0 active, 2 blocked, 1 next, 1 done, 1 retired" in theirs
    for line in theirs[1:3]:
        assert line in ours, (line, ours)


def test_a_milestone_of_an_objective_never_seen_folds_to_nothing(life: State) -> None:
    assert "m-0rph1" not in life.entities  # Superself: "an orphan milestone folds to nothing"


def test_a_supersession_spelled_with_successor_needs_a_confirmed_successor() -> None:
    """Superself's `entity.superseded` names the successor `successor`, and settles only when
    that record exists and was confirmed (its entities test of standalone claims)."""
    log = Log()
    kept = log.entity("standing rule a")
    proposal = log.entity("unconfirmed proposal b", proposed=True)
    log.add("entity.superseded", b'{"entity":"%s","successor":"%s"}' % (kept.encode(), proposal.encode()))
    lonely = log.entity("standing rule c")
    log.add("entity.superseded", b'{"entity":"%s","successor":"e-nope99"}' % lonely.encode())
    older, newer = log.entity("older statement"), log.entity("newer statement")
    log.add("entity.superseded", b'{"entity":"%s","successor":"%s"}' % (older.encode(), newer.encode()))
    e = log.state().entities
    assert (e[kept].status, e[lonely].status) == ("confirmed", "confirmed")
    assert (e[older].status, e[older].superseded_by) == ("superseded", newer)


def test_work_requirements_are_criteria(life: State) -> None:
    """work.required declares a criterion, work.covered covers it, a revision restates it
    (its coverage goes stale: Superself asks for a recheck), a retirement removes it."""
    blog = life.entities["w-bl0g1"]
    assert (blog.criteria, blog.covered) == (["draft reviewed", "images under 100kb"], ["draft reviewed"])


def test_a_unit_blocked_on_a_decision_waits_on_a_person() -> None:
    """Superself listed every unit blocked on a decision under "Waiting on you", whatever the
    grammar that blocked it; it is waiting, not pending (there is nothing to confirm)."""
    log = Log()
    unit = log.entity("needs a ruling", "work")
    other = log.entity("parked on vendor", "work")
    log.add("entity.blocked", Blocked(unit, on="decision", why="pricing undecided"))
    log.add("entity.blocked", Blocked(other, on="dependency", why="upstream api missing"))
    state = log.state()
    e = state.entities
    assert (is_waiting(e[unit]), is_pending(e[unit]), is_waiting(e[other])) == (True, False, False)
    assert (e[unit].blocked_why, waiting_count(state)) == ("pricing undecided", 1)


def test_a_done_carrying_its_report_is_done_with_that_report() -> None:
    """Superself's `state done --report` wrote the report inside entity.done (`report`): the
    done-time report selfhub writes as a report.added of the same moment."""
    log = Log()
    unit = log.entity("exercise the spine", "work")
    log.add("entity.done", b'{"entity":"%s","report":"landed and verified"}' % unit.encode())
    state = log.state()
    assert state.entities[unit].execution == "done"
    assert [r.text for r in state.reports[unit]] == ["landed and verified"]


def test_a_superself_report_s_evidence_is_split_by_shape_unless_typed() -> None:
    """Before `evidenceTyped`, Superself put whatever evidence it was given in refs.commits
    and told commits apart by shape; a digit-only value is a build number, not a commit."""
    log = Log()
    unit = log.entity("ship it", "work")
    untyped = b'{"text":"built","notes":["ci green"]}'
    typed = b'{"text":"built again","evidenceTyped":true}'
    log.add("report.added", untyped)
    log.add("report.added", typed)
    for event, commits in zip(log.events[-2:], (["1234567", "c0ffee1"], ["1234567"]), strict=True):
        log.events[log.events.index(event)] = msgspec.structs.replace(
            event, refs={"work": unit, "commits": commits}
        )
    first, second = log.state().reports[unit]
    assert (first.commit, first.notes) == ("c0ffee1", ("1234567", "ci green"))
    assert (second.commit, second.notes) == ("1234567", ())


def test_a_retirement_naming_its_successor_reads_the_same_in_either_grammar() -> None:
    """Superself's `work retire --successor` wrote entity.retired with `successor` after the
    cutover, as work.retired did before it."""
    log = Log()
    old, new = log.entity("a direction given up", "work"), log.entity("carry the tier", "work")
    retire = b'{"entity":"%s","why":"moved","successor":"%s"}' % (old.encode(), new.encode())
    log.add("entity.retired", retire)
    retired = log.state().entities[old]
    assert (retired.execution, retired.closed_why, retired.superseded_by) == ("retired", "moved", new)


def test_legacy_dones_read_as_judged_only_as_the_import_brings_them() -> None:
    """Superself's fold applied every legacy close: only its verbs, which held the gate, wrote
    them. The import vouches for each one it brings, so both stores read as Superself printed
    them (every test above folds them so). The same log folded without the import's voucher
    is events anyone could have written: each evidence-free close is ruled by the gate."""
    judged = {
        PRE: {"w-8x0th": "done"},
        LIFECYCLE: {"o-l4nd1": "done", "m-ap1f1": "done", "w-r3op1": "in-progress"},  # reopened by a start
    }
    for root, executions in judged.items():
        raw = fold_all(store_events(root))
        assert [s.entity for s in raw.signals if s.kind == "done-refused"] == list(executions)
        assert "done" not in {raw.entities[i].execution for i in executions}
        vouched = fold_all(as_imported(store_events(root)))
        assert vouched.signals == []
        assert {i: vouched.entities[i].execution for i in executions} == executions
