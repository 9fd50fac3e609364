"""The fold: events in id order → state. Pure and deterministic.

`fold` advances a state it owns by events whose ids are greater than the state's last id;
`fold_all` sorts any collection of events by id, drops duplicate copies and folds them from
nothing. One handler per event type; each reads the typed payload and edits the state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import msgspec

from service.model import completion, legacy, order, undo
from service.model.events import (
    VOUCHER,
    Assertion,
    Assessed,
    Blocked,
    Covered,
    EntityWhy,
    Event,
    Legacy,
    Linked,
    Payload,
    Placed,
    ProjectAdded,
    ProjectChanged,
    ReportAdded,
    Reviewed,
    RunExited,
    RunStarted,
    Superseded,
    payload_of,
)
from service.model.state import (
    DEFAULT_STATES,
    RELATIONS,
    Entity,
    Fact,
    Pending,
    Project,
    Report,
    Run,
    Signal,
    State,
    kind_of,
)

Handler = Callable[[State, Event, Payload], None]


def fold(events: Iterable[Event], state: State | None = None) -> State:
    """Advance `state` (or a new one) by `events`, which must come in increasing id order."""
    state = State() if state is None else state
    for event in events:
        if not order.after(event.id, state.last_id):
            raise ValueError(f"event {event.id} is not after {state.last_id}; use fold_all")
        _apply(state, event)
    return state


def fold_all(events: Iterable[Event]) -> State:
    """Fold any collection of events: id order, one copy of each id, whatever the file order."""
    ordered, conflicts = distinct(events)
    state = fold(ordered)
    state.signals.extend(conflict_signals(conflicts))
    return state


def distinct(events: Iterable[Event]) -> tuple[list[Event], list[str]]:
    """The events in id order, one copy of each id (the winner, `order`), and the sorted ids
    whose copies differ."""
    found = order.distinct(events, _id_of, order.event_rank)
    return found.kept, found.conflicts


def conflict_signals(ids: list[str]) -> list[Signal]:
    """What fold_all adds after the fold: one signal per id whose copies differ."""
    return [Signal("conflicting-copies", event_id, "two copies differ in bytes") for event_id in ids]


def _id_of(event: Event) -> str:
    return event.id


def _apply(state: State, event: Event) -> None:
    state.events += 1
    state.last_id = event.id
    try:
        payload = payload_of(event)
    except msgspec.ValidationError as exc:
        state.signals.append(Signal("malformed-payload", event.id, str(exc)))
        return
    if payload is None:
        state.unknown += 1
        return
    if state.annulled and event.id in state.annulled:
        payload = undo.taken_back(state, event.id, payload)
        if payload is None:
            return
    handler = HANDLERS.get(event.type)
    if handler is None:
        handler = _legacy
    handler(state, event, payload)


def _signal(state: State, event: Event, kind: str, detail: str, entity: str | None = None) -> None:
    state.signals.append(Signal(kind, event.id, detail, entity))


def _target(state: State, event: Event, entity_id: str) -> Entity | None:
    entity = state.entities.get(entity_id)
    if entity is None:
        _signal(state, event, "unknown-entity", f"{event.type} names no known record", entity_id)
        return None
    entity.updated = event.id
    return entity


# --- assertions -----------------------------------------------------------------------


def _assert(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, Assertion)
    confirmed = event.type == "entity.confirmed"
    existing = state.entities.get(payload.entity)
    if existing is not None:
        existing.updated = event.id
        if confirmed:
            _confirm(state, event, existing)
        return
    if payload.text is None:
        _signal(state, event, "unknown-entity", "confirmation of no known record", payload.entity)
        return
    entity = new_entity(event, payload)
    state.entities[entity.id] = entity
    kind = kind_of(payload.labels)
    if kind is not None:
        _new_fact(state, event, entity, kind)
    if confirmed:
        _confirm(state, event, entity)
    elif entity.supersedes:
        for old in entity.supersedes:  # kept at hand until the proposal is confirmed or withdrawn
            state.awaiting.setdefault(old, []).append(entity.id)


def new_entity(event: Event, payload: Assertion) -> Entity:
    """The record an assertion with text makes, as proposed (a confirmation follows it)."""
    return Entity(
        id=payload.entity,
        project=event.project,
        text=payload.text or "",
        labels=list(payload.labels),
        links=list(payload.links),
        criteria=list(payload.criteria),
        covered=[],
        exposure=payload.exposure or "search",
        priority=payload.priority,
        scope=payload.scope or "project",
        status="proposed",
        created=event.id,
        updated=event.id,
        actor=event.origin.actor,
        target=payload.target,
        why=payload.why,
        ledger=payload.ledger,
        proposed_at=event.ts if event.type == "entity.proposed" else None,
        expires=payload.expires,
    )


def _unawait(state: State, entity: Entity) -> None:
    for old in entity.supersedes:
        waiting = state.awaiting.get(old)
        if waiting is not None and entity.id in waiting:
            waiting.remove(entity.id)
            if not waiting:
                del state.awaiting[old]


def _new_fact(state: State, event: Event, entity: Entity, kind: str) -> None:
    fields = entity.ledger
    recorded = fields.state if fields is not None and fields.state else DEFAULT_STATES[kind]
    reason = fields.supersede_reason if fields is not None else None
    scope = list(fields.applies_to) if fields is not None else []
    fact = Fact(kind=kind, state=recorded, changed=event.id, reason=reason, applies_to=scope)
    state.ledger[entity.id] = fact
    if any(link.type in RELATIONS for link in entity.links):
        _relate(fact, entity)


def _relate(fact: Fact, entity: Entity) -> None:
    """The fact's relations from the entity's links: supports grouped by set, in set order."""
    sets: dict[int, list[str]] = {}
    fact.depends_on, fact.answers = [], []
    for link in entity.links:
        if link.type == "supports":
            members = sets.setdefault(link.set or 0, [])
            if link.target not in members:
                members.append(link.target)
        elif link.type == "depends-on" and link.target not in fact.depends_on:
            fact.depends_on.append(link.target)
        elif link.type == "answers" and link.target not in fact.answers:
            fact.answers.append(link.target)
    fact.supports = [sets[key] for key in sorted(sets)]


def _confirm(state: State, event: Event, entity: Entity) -> None:
    """Confirmation: the record and every placement waiting with it take effect."""
    if entity.status == "proposed":
        entity.status = "confirmed"
        entity.confirmed_once = True
        if state.awaiting:
            _unawait(state, entity)
        for old in entity.supersedes:
            _supersede(state, event, old, entity.id, None)
    if entity.status != "confirmed":
        return
    for pending in list(entity.pending):
        _place_now(entity, pending)
    entity.pending.clear()
    for other_id in state.pairs.pop(entity.id, ()):
        other = state.entities[other_id]
        for pending in [p for p in other.pending if p.pair == entity.id]:
            _place_now(other, pending)
            other.pending.remove(pending)


def _supersede(state: State, event: Event, old_id: str, new_id: str | None, why: str | None) -> None:
    old = state.entities.get(old_id)
    if old is None:
        _signal(state, event, "unknown-entity", "supersedes no known record", old_id)
        return
    if old.status not in ("proposed", "confirmed"):
        detail = f"{old_id} is {old.status}; only live records are superseded"
        _signal(state, event, "not-live", detail, old_id)
        return
    if old.status == "proposed" and state.awaiting:
        _unawait(state, old)
    successor = state.entities.get(new_id or "")
    undo.remember_status(old, successor.created if successor is not None else event.id)
    old.status = "superseded"
    old.superseded_by = new_id
    fact = state.ledger.get(old_id)
    if fact is not None:
        fact.current = False
        fact.superseded_by = new_id
        fact.changed = event.id
    old.closed_why = why
    old.pending.clear()
    old.updated = event.id
    _drop_pairs(state, old_id)


def _superseded(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, Superseded)
    by = payload.by
    if by is None and payload.successor is not None:
        # Superself's spelling: it settles only on a successor this log holds, confirmed
        successor = state.entities.get(payload.successor)
        if successor is None or successor.status not in ("confirmed", "superseded"):
            return
        by = successor.id
    _supersede(state, event, payload.entity, by, payload.why)


def _retracted(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, EntityWhy)
    entity = _target(state, event, payload.entity)
    if entity is None or entity.status == "retracted":
        return
    if entity.status == "proposed" and state.awaiting:
        _unawait(state, entity)
    undo.remember_status(entity, event.id)
    entity.status = "retracted"
    entity.closed_why = payload.why
    entity.pending.clear()
    _drop_pairs(state, entity.id)
    fact = state.ledger.get(entity.id)
    if fact is not None:
        fact.current = False
        fact.retracted = True
        fact.changed = event.id


def _drop_pairs(state: State, entity_id: str) -> None:
    """A proposal that is withdrawn or replaced unconfirmed takes its paired placements along:
    the pair was one decision, and its add can no longer be confirmed."""
    for other_id in state.pairs.pop(entity_id, ()):
        other = state.entities[other_id]
        other.pending = [p for p in other.pending if p.pair != entity_id]


# --- placement and links --------------------------------------------------------------


def _placed(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, Placed)
    entity = _target(state, event, payload.entity)
    if entity is None or entity.status in ("retracted", "superseded"):
        return
    pending = Pending(event.id, payload.exposure, payload.priority, payload.scope, payload.why, payload.pair)
    if event.origin.confirmed:
        _place_now(entity, pending)
    else:
        entity.pending.append(pending)
        if pending.pair is not None and pending.pair != entity.id:
            state.pairs.setdefault(pending.pair, []).append(entity.id)


def _place_now(entity: Entity, pending: Pending) -> None:
    if pending.exposure is not None:
        entity.exposure = pending.exposure
    if pending.priority is not None:
        entity.priority = pending.priority
    if pending.scope is not None:
        entity.scope = pending.scope


def _linked(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, Linked)
    entity = _target(state, event, payload.entity)
    if entity is None:
        return
    if event.type == "entity.linked":
        if payload.link not in entity.links:
            entity.links.append(payload.link)
            undo.remember_link(entity, event.id, payload.link)
    elif payload.link in entity.links:
        entity.links.remove(payload.link)
    fact = state.ledger.get(entity.id)
    if fact is not None and payload.link.type in RELATIONS:
        _relate(fact, entity)


def _covered(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, Covered)
    entity = _target(state, event, payload.entity)
    if entity is None:
        return
    if payload.criterion not in entity.criteria:
        detail = f"{payload.criterion!r} is not a criterion"
        _signal(state, event, "undeclared-criterion", detail, entity.id)
    elif payload.criterion not in entity.covered:
        entity.covered.append(payload.criterion)


# --- execution facts ------------------------------------------------------------------


def _started(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, EntityWhy)
    entity = _target(state, event, payload.entity)
    if entity is not None and entity.execution not in ("done", "retired"):
        entity.execution = "in-progress"
        entity.started = True
        entity.blocked_on = None


def _blocked(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, Blocked)
    entity = _target(state, event, payload.entity)
    if entity is not None and entity.execution not in ("done", "retired"):
        entity.execution = "blocked"
        entity.blocked_on = payload.on or payload.why or "unspecified"
        entity.blocked_why = payload.why


def _unblocked(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, EntityWhy)
    entity = _target(state, event, payload.entity)
    if entity is not None and entity.execution == "blocked":
        entity.execution = "in-progress" if entity.started else None
        entity.blocked_on = None


def _done(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, EntityWhy)
    entity = _target(state, event, payload.entity)
    if entity is None:
        return
    if payload.report:  # Superself's done-time report, written inside the done
        state.reports.setdefault(entity.id, []).append(Report(event.id, event.ts, payload.report))
    judged = completion.imported_from_superself(event) and event.id in state.vouched
    reason = completion.refusal(entity, state.reports.get(entity.id, ()), event.ts, judged=judged)
    if reason is not None:
        _signal(state, event, "done-refused", reason, entity.id)
        return
    entity.execution = "done"
    entity.blocked_on = None
    entity.closed_why = payload.why


def _retired(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, EntityWhy)
    entity = _target(state, event, payload.entity)
    if entity is not None and entity.execution != "done":
        undo.remember_execution(entity, event.id)
        entity.execution = "retired"
        entity.closed_why = payload.why
        entity.superseded_by = payload.successor or entity.superseded_by


def _restored(state: State, event: Event, payload: Payload) -> None:
    """Undo of done or retired: the unit is open again. Retraction stays terminal. With
    `refs.annuls` (Superself's undo), the event it names is taken back instead."""
    assert isinstance(payload, EntityWhy)
    annulled = undo.annulled_id(event)
    if annulled is not None:
        for record in undo.annul(state, event, payload.entity, annulled):
            fact = state.ledger.get(record.id)
            if fact is not None:
                _relate(fact, record)
        return
    entity = _target(state, event, payload.entity)
    if entity is not None and entity.execution in ("done", "retired"):
        entity.execution = "in-progress" if entity.started else None
        entity.closed_why = None
        if entity.status != "superseded":
            entity.superseded_by = None  # a retirement's successor no longer stands


# --- ledger records -----------------------------------------------------------------------


def _ledger_target(state: State, event: Event, entity_id: str, kind: str) -> Fact | None:
    entity = _target(state, event, entity_id)
    if entity is None:
        return None
    fact = state.ledger.get(entity_id)
    if fact is None or fact.kind != kind:
        _signal(state, event, f"not-a-{kind}", f"{event.type} names a record that is not a {kind}", entity_id)
        return None
    return fact


def _assessed(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, Assessed)
    fact = _ledger_target(state, event, payload.entity, "claim")
    if fact is not None and fact.state != payload.state:
        fact.state = payload.state
        fact.changed = event.id


def _revoked(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, EntityWhy)
    fact = _ledger_target(state, event, payload.entity, "decision")
    if fact is not None and fact.state != "revoked":
        fact.state = "revoked"
        fact.changed = event.id


def _reviewed(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, Reviewed)
    entity = _target(state, event, payload.entity)
    fact = state.ledger.get(payload.entity)
    if entity is None or fact is None:
        return
    fact.reviewed.extend(mark for mark in payload.marks if mark not in fact.reviewed)


# --- reports, runs, projects ----------------------------------------------------------


def _report(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, ReportAdded)
    refs = event.refs or {}
    work = payload.work or refs.get("work")
    key = work if isinstance(work, str) else ""
    commits, notes = legacy.evidence(refs.get("commits"), payload.notes, payload.evidence_typed)
    commit = payload.commit or (commits[0] if commits else None)
    notes = [*commits[1:], *notes] if payload.commit is None else [*commits, *notes]
    report = Report(event.id, event.ts, payload.text, commit, payload.artifact, tuple(notes))
    state.reports.setdefault(key, []).append(report)


def _run_started(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, RunStarted)
    state.runs[payload.work] = Run(started=event.id)


def _run_exited(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, RunExited)
    run = state.runs.setdefault(payload.work, Run(started=event.id))
    run.exited = event.id
    run.code = payload.code


def _project_added(state: State, event: Event, payload: Payload) -> None:
    """The first registration of a slug stands. A later one (two stores made on their own,
    then synced) loses nothing: its description fills in a missing one, and a different
    description is kept in a health signal."""
    assert isinstance(payload, ProjectAdded)
    project = state.projects.get(payload.slug)
    if project is None:
        state.projects[payload.slug] = Project(payload.slug, event.id, payload.description)
    elif project.description is None:
        project.description = payload.description
    elif payload.description not in (None, project.description):
        _signal(
            state,
            event,
            "project-registered-twice",
            f"project {payload.slug} was registered again as {payload.description!r}; "
            f"the first registration's {project.description!r} is kept",
        )


def _project_changed(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, ProjectChanged)
    project = state.projects.get(payload.name or "")
    if project is None and payload.name == event.project:
        return  # Superself's archive in the project's own log: the importer carries it over
    if project is None:
        _signal(state, event, "unknown-project", f"{event.type} names no known project")
        return
    project.archived = event.type == "project.archived"
    project.why = payload.why


# --- legacy Superself kinds -----------------------------------------------------------


def _legacy(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, Legacy)
    legacy.read(state, event, payload, HANDLERS)


HANDLERS: dict[str, Handler] = {
    "entity.proposed": _assert,
    "entity.confirmed": _assert,
    "entity.superseded": _superseded,
    "entity.retracted": _retracted,
    "entity.placed": _placed,
    "entity.linked": _linked,
    "entity.unlinked": _linked,
    "entity.covered": _covered,
    "entity.started": _started,
    "entity.blocked": _blocked,
    "entity.unblocked": _unblocked,
    "entity.done": _done,
    "entity.retired": _retired,
    "entity.restored": _restored,
    "entity.assessed": _assessed,
    "entity.revoked": _revoked,
    "entity.reviewed": _reviewed,
    "report.added": _report,
    "work.run-started": _run_started,
    "work.run-exited": _run_exited,
    "project.added": _project_added,
    "project.archived": _project_changed,
    "project.restored": _project_changed,
    VOUCHER: completion.vouch,
}
