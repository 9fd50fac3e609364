"""The status projection as it was before its counts were made in one pass over the records:
kept as the oracle `tests/unit/test_status_census.py` holds `build_status` to; not used by
the product.

`self status`: one project's goal, work counts, progress, waiting items, health, processes.

Everything here is derived from folded state plus two facts the shell supplies: the local
process ledger's liveness word per work unit, and the log lines the store quarantined.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

import msgspec

from service.core.fold import lapse
from service.core.fold.hotslice import WORK_STATES, ColdCounts, work_state
from service.core.fold.state import Entity, State
from service.core.ledger import derived
from service.core.ledger.ledger import moot
from service.core.projections.render import Near, one_line, plural, shorts_for
from service.core.projections.views import awaits_decision, is_waiting, ordered, process_word

ACTIVE_LIVENESS = ("running", "stale")


class WorkCounts(msgspec.Struct, frozen=True):
    active: int = 0
    blocked: int = 0
    next: int = 0
    done: int = 0
    retired: int = 0


class HealthLine(msgspec.Struct, frozen=True):
    """A health signal from the fold (`where` = event id) or a quarantined line (file:line)."""

    kind: str
    where: str
    detail: str
    entity: str | None = None


class ProcessLine(msgspec.Struct, frozen=True):
    work: str
    short: str
    state: str
    text: str | None = None


class Deadline(msgspec.Struct, frozen=True):
    target: str
    entity: str
    label: str
    text: str
    overdue: bool


class ReviewLine(msgspec.Struct, frozen=True):
    """A ledger record status lists (it owes a review, stands on nothing any more, is
    blocked, or is a moot question), with what explains it."""

    record: str
    short: str
    kind: str
    text: str
    support: str
    grounds: list[str]
    alias: str | None = None  # an imported record's id in its old ledger


class StatusDoc(msgspec.Struct):
    project: str
    goal: str | None
    goal_id: str | None
    work: WorkCounts
    objectives_open: int
    milestones_reached: int
    milestones_total: int
    criteria_covered: int
    criteria_total: int
    waiting: int
    unknown: int
    events: int
    overdue: list[Deadline]
    health: list[HealthLine]
    processes: list[ProcessLine]
    review_owed: list[ReviewLine] = msgspec.field(default_factory=list)
    unsupported: list[ReviewLine] = msgspec.field(default_factory=list)
    blocked: list[ReviewLine] = msgspec.field(default_factory=list)
    moot: list[ReviewLine] = msgspec.field(default_factory=list)
    lapsed: int = 0  # proposals past their expiry: still proposed, no longer waiting on you


def current_goal(state: State) -> Entity | None:
    """The governing goal: the first live goal record in render order, confirmed first."""
    goals = ordered(e for e in state.live() if "goal" in e.labels)
    goals.sort(key=lambda e: e.status != "confirmed")
    return goals[0] if goals else None


def work_counts(state: State, cold: ColdCounts | None = None) -> WorkCounts:
    """Work units ever confirmed, by execution (`hotslice.work_state`): in progress, blocked,
    next (not started), done, retired; with `cold`, the units a hot slice left out too."""
    counts = list(cold.units) if cold is not None else [0] * len(WORK_STATES)
    for e in state.entities.values():
        unit = work_state(e)
        if unit is not None:
            counts[unit] += 1
    return WorkCounts(*counts)


def deadlines(entities: Iterable[Entity], today: str) -> list[Deadline]:
    """Open records with a target, soonest first; a target before `today` is overdue."""
    found = [
        Deadline(e.target, e.id, e.labels[0] if e.labels else "-", e.text, e.target[:10] < today)
        for e in entities
        if e.target and e.live
    ]
    return sorted(found, key=lambda d: (d.target, d.entity))


def waiting_count(state: State, now: str | None = None) -> int:
    """Items waiting on a person at instant `now`: proposed records (but those past their
    expiry, `lapse`), each placement awaiting confirmation, and units blocked on a decision."""
    return sum(
        (e.status == "proposed" and not lapse.lapsed(e, now)) + len(e.pending) + awaits_decision(e)
        for e in state.entities.values()
        if is_waiting(e, now)
    )


def lapsed_count(state: State, now: str | None) -> int:
    """Proposals that no longer wait on a person at `now` (Superself's expiry)."""
    return sum(lapse.lapsed(e, now) for e in state.entities.values())


def _progress(state: State) -> tuple[int, int, int, int, int]:
    """Superself's reading of the open objectives: their milestones (a milestone belongs to
    the objective its first member-of link names; dropped and superseded ones count), how
    many are reached, and the exit criteria of those not superseded, with each open
    objective's own criteria (a work unit's requirements are not exit criteria)."""
    open_ids = {e.id for e in state.entities.values() if "objective" in e.labels and e.live}
    reached = milestones = covered = criteria = 0
    counted = [state.entities[i] for i in sorted(open_ids)]
    for e in state.entities.values():
        parent = next((link.target for link in e.links if link.type == "member-of"), None)
        if "milestone" in e.labels and parent in open_ids:
            milestones += 1
            reached += e.execution == "done"
            counted += [e] if e.status != "superseded" else []
    for e in counted:
        criteria += len(e.criteria)
        covered += sum(1 for c in e.criteria if c in e.covered)
    return len(open_ids), reached, milestones, covered, criteria


def health_lines(state: State, quarantined: list[tuple[str, int, str]]) -> list[HealthLine]:
    lines = [HealthLine(s.kind, s.event, s.detail, s.entity) for s in state.signals]
    lines += [HealthLine("quarantined", f"{f}:{n}", why) for f, n, why in quarantined]
    return lines


def process_lines(state: State, runs: dict[str, str], near: Near | None = None) -> list[ProcessLine]:
    """Runs of open units (and any process the local ledger still counts as alive); `state`
    holds each unit they name that exists (a slice: with `near`, the ids around them)."""
    shown: list[str] = []
    for work_id in sorted(set(state.runs) | set(runs)):
        e = state.entities.get(work_id)
        if e is None or e.live or runs.get(work_id) in ACTIVE_LIVENESS:
            shown.append(work_id)
    shorts = _shorts(shown, state, near)
    return [
        ProcessLine(
            work_id,
            shorts[work_id],
            process_word(state.runs.get(work_id), runs.get(work_id)),
            state.entities[work_id].text if work_id in state.entities else None,
        )
        for work_id in shown
    ]


def ledger_lines(
    state: State, near: Near | None = None, fetch: Fetch | None = None
) -> tuple[list[ReviewLine], list[ReviewLine], list[ReviewLine]]:
    """Current ledger records that owe a review, that lost all support (accepted claims and
    adopted decisions: those a reader relies on), that are blocked. On a hot slice (`near`
    and `fetch` given) the records listed and the grounds named are fetched, and short ids
    are made among the ids around them (every fact is a record's: the fold makes both)."""
    marked = derived.derive(state, marked=True).items()
    views = {i: v for i, v in marked if v.current and (near or i in state.entities)}
    grounds = [x for v in views.values() for x in (*v.blocked_by, *(o.ground for o in v.review_owed))]
    if near is None:
        shorts = shorts_for([*views, *grounds], state.entities)
    else:
        listed = [i for i, v in views.items() if v.blocked or (v.review_owed or v.support == "unsupported")]
        state = with_fetched(state, [*listed, *grounds], fetch)
        shorts = _shorts([*listed, *grounds], state, near)

    named = {i: f"{shorts.get(i, i)} ({a})" for i in shorts if (a := _alias(state, i))}
    named = {i: named.get(i, short) for i, short in shorts.items()}

    def line(record_id: str, grounds: list[str]) -> ReviewLine:
        view = views[record_id]
        e = state.entities[record_id]
        return ReviewLine(
            record_id, shorts[record_id], view.kind, e.text, view.support, grounds, _alias(state, record_id)
        )

    owed = [
        line(i, [_owed_text(o.ground, o.head, o.reason, named) for o in v.review_owed])
        for i, v in sorted(views.items())
        if v.review_owed and derived.surfaced(v.current, v.state)
    ]
    unsupported = [
        line(i, [f"{named.get(x.ground, x.ground)} {x.reason}" for x in v.lost])
        for i, v in sorted(views.items())
        if v.support == "unsupported" and derived.surfaced(v.current, v.state)
    ]
    blocked = [line(i, [named[b] for b in v.blocked_by]) for i, v in sorted(views.items()) if v.blocked]
    return owed, unsupported, blocked


def _alias(state: State, record_id: str) -> str | None:
    e = state.entities.get(record_id)
    return e.ledger.alias if e is not None and e.ledger is not None else None


def _owed_text(ground: str, head: str, reason: str, named: dict[str, str]) -> str:
    now = f" (now {named.get(head, head)})" if head != ground else ""
    return f"{named.get(ground, ground)} {reason}{now}"


def moot_lines(state: State, near: Near | None = None) -> list[ReviewLine]:
    """Current questions whose declared answers all lead to one action (context leaves
    them out): each with that action."""
    found = [
        e
        for e in state.entities.values()
        if e.live and "question" in e.labels and e.ledger is not None and moot(e.ledger)
    ]
    shorts = _shorts([e.id for e in found], state, near)
    return [
        ReviewLine(
            e.id,
            shorts[e.id],
            "question",
            e.text,
            "clean",
            [f'every answer leads to "{e.ledger.options[0].action}"'],
        )
        for e in sorted(found, key=lambda e: e.id)
        if e.ledger is not None
    ]


def build_status(
    project: str,
    state: State,
    runs: dict[str, str],
    quarantined: list[tuple[str, int, str]],
    today: str,
    now: str | None = None,
    *,
    cold: ColdCounts | None = None,
    near: Near | None = None,
    fetch: Fetch | None = None,
) -> StatusDoc:
    """The status of one project: counts, waiting items (judged at instant `now`: a proposal
    past its expiry no longer waits, `lapse`), health and process lines.

    From the whole state, or from a hot slice (`hotslice.kept`: every record status reads
    but ledger records listed and units with runs) with the counts of what it left out
    (`cold`), the ids around given ones (`near`) and the records it left out by id (`fetch`).
    """
    with_units = with_fetched(state, [*state.runs, *runs], fetch)  # counts read `state` alone
    goal = current_goal(state)
    objectives, reached, milestones, covered, criteria = _progress(state)
    owed, unsupported, blocked = ledger_lines(state, near, fetch)
    return StatusDoc(
        project=project,
        goal=goal.text if goal else None,
        goal_id=goal.id if goal else None,
        work=work_counts(state, cold),
        objectives_open=objectives,
        milestones_reached=reached,
        milestones_total=milestones,
        criteria_covered=covered,
        criteria_total=criteria,
        waiting=waiting_count(state, now),
        unknown=state.unknown,
        events=state.events,
        overdue=[d for d in deadlines(state.entities.values(), today) if d.overdue],
        health=health_lines(state, quarantined),
        processes=process_lines(with_units, runs, near),
        review_owed=owed,
        unsupported=unsupported,
        blocked=blocked,
        moot=moot_lines(state, near),
        lapsed=lapsed_count(state, now),
    )


Fetch = Callable[[Collection[str]], list[Entity]]
"""The records of these ids that a hot slice left out (those that exist)."""


def with_fetched(state: State, wanted: Iterable[str], fetch: Fetch | None) -> State:
    """`state` with the records of `wanted` it lacks fetched into a copy of its records."""
    missing = sorted({i for i in wanted if i not in state.entities})
    if fetch is None or not missing:
        return state
    return msgspec.structs.replace(state, entities={**state.entities, **{e.id: e for e in fetch(missing)}})


def _shorts(wanted: list[str], state: State, near: Near | None) -> dict[str, str]:
    """Short ids of `wanted` among every record: `state`'s, and on a slice the ids around them."""
    universe = list(state.entities) if near is None else [*state.entities, *near(set(wanted))]
    return shorts_for(wanted, universe)


def work_text(w: WorkCounts) -> str:
    retired = f", {w.retired} retired" if w.retired else ""
    return f"{w.active} active, {w.blocked} blocked, {w.next} next, {w.done} done{retired}"


def render_status(doc: StatusDoc) -> str:
    """The text render, modelled on Superself's `self status`."""
    goal = one_line(doc.goal) if doc.goal else 'none set (`self goal "..."` sets one)'
    lines = [
        f"{doc.project} — goal: {goal}",
        f"work: {work_text(doc.work)}",
        f"objectives: {doc.objectives_open} open, {doc.milestones_reached} of "
        f"{doc.milestones_total} milestones reached, {doc.criteria_covered} of "
        f"{doc.criteria_total} exit criteria covered",
        f"waiting on you: {doc.waiting}",
    ]
    if doc.lapsed:
        lines.append(f"lapsed: {plural(doc.lapsed, 'proposal')} past expiry, still proposed")
    if doc.overdue:
        listed = "; ".join(f"{d.target} [{d.label}] {one_line(d.text, 60)}" for d in doc.overdue)
        lines.append(f"overdue: {listed}")
    if doc.unknown:
        lines.append(f"unknown event types: {plural(doc.unknown, 'event')} kept, not folded")
    for title, rows in (
        ("review owed", doc.review_owed),
        ("unsupported", doc.unsupported),
        ("blocked decisions", doc.blocked),
        ("moot questions", doc.moot),
    ):
        if rows:
            lines.append(f"{title}: {len(rows)}")
            lines += [
                f"  - {r.short}{f' ({r.alias})' if r.alias else ''} [{r.kind}] {one_line(r.text, 60)}: "
                f"{', '.join(r.grounds)}"
                for r in rows
            ]
        if rows and rows is doc.review_owed:
            lines.append("  (`self review ID` acknowledges a review)")
    lines += _health_text(doc.health)
    lines += [f"process {p.short}: {p.state}" for p in doc.processes]
    return "\n".join(lines) + "\n"


def _health_text(health: list[HealthLine]) -> list[str]:
    if not health:
        return ["health: ok"]
    lines = [f"health: {plural(len(health), 'signal')}"]
    for h in health:
        about = f" ({h.entity})" if h.entity else ""
        lines.append(f"  - {h.kind} at {h.where}{about}: {one_line(h.detail)}")
    return lines
