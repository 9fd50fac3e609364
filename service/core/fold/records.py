"""The fold's handlers of a record's life: its assertion (proposed or confirmed), supersession and
retraction, placement, links and covered criteria, and a ledger record's facts (assessed,
revoked, reviewed); with `signal` and `target`, through which every handler reports what it
could not apply. `fold.py` drives them."""

from __future__ import annotations

from collections.abc import Callable

from service.core.events.events import (
    Assertion,
    Assessed,
    Covered,
    EntityWhy,
    Event,
    Linked,
    Payload,
    Placed,
    Reviewed,
    Superseded,
)
from service.core.fold import undo
from service.core.fold.state import (
    DEFAULT_STATES,
    LIVE_STATUSES,
    RELATIONS,
    Entity,
    Fact,
    Pending,
    Signal,
    State,
    kind_of,
)

Handler = Callable[[State, Event, Payload], None]


def signal(state: State, event: Event, kind: str, detail: str, entity: str | None = None) -> None:
    state.signals.append(Signal(kind, event.id, detail, entity))


def target(state: State, event: Event, entity_id: str) -> Entity | None:
    entity = state.entities.get(entity_id)
    if entity is None:
        signal(state, event, "unknown-entity", f"{event.type} names no known record", entity_id)
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
        signal(state, event, "unknown-entity", "confirmation of no known record", payload.entity)
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
    scope = tuple(fields.applies_to) if fields is not None else ()
    fact = Fact(kind=kind, state=recorded, changed=event.id, reason=reason, applies_to=scope)
    state.ledger[entity.id] = fact
    if any(link.type in RELATIONS for link in entity.links):
        relate(fact, entity)


def relate(fact: Fact, entity: Entity) -> None:
    """The fact's relations from the entity's links: supports grouped by set, in set order."""
    sets: dict[int, list[str]] = {}
    depends_on: list[str] = []
    answers: list[str] = []
    for link in entity.links:
        if link.type == "supports":
            members = sets.setdefault(link.set or 0, [])
            if link.target not in members:
                members.append(link.target)
        elif link.type == "depends-on" and link.target not in depends_on:
            depends_on.append(link.target)
        elif link.type == "answers" and link.target not in answers:
            answers.append(link.target)
    fact.depends_on, fact.answers = tuple(depends_on), tuple(answers)
    fact.supports = tuple(tuple(sets[key]) for key in sorted(sets))


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
        signal(state, event, "unknown-entity", "supersedes no known record", old_id)
        return
    if old.status not in LIVE_STATUSES:
        detail = f"{old_id} is {old.status}; only live records are superseded"
        signal(state, event, "not-live", detail, old_id)
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
    entity = target(state, event, payload.entity)
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
    entity = target(state, event, payload.entity)
    if entity is None or entity.status in ("retracted", "superseded"):
        return
    pending = Pending(event.id, payload.exposure, payload.priority, payload.scope, payload.why, payload.pair)
    if event.origin.confirmed:
        _place_now(entity, pending)
    else:
        entity.pending.append(pending)
        if pending.pair is not None and pending.pair != entity.id:
            state.pairs.setdefault(pending.pair, []).append(entity.id)


def _declined(state: State, event: Event, payload: Payload) -> None:
    """A person declined what waits on the record's placement: its own placements waiting and
    those proposed together with them (`pairs`) are dropped; the record stays where it is."""
    assert isinstance(payload, EntityWhy)
    entity = target(state, event, payload.entity)
    if entity is None:
        return
    entity.pending.clear()
    _drop_pairs(state, entity.id)


def _place_now(entity: Entity, pending: Pending) -> None:
    if pending.exposure is not None:
        entity.exposure = pending.exposure
    if pending.priority is not None:
        entity.priority = pending.priority
    if pending.scope is not None:
        entity.scope = pending.scope


def _linked(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, Linked)
    entity = target(state, event, payload.entity)
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
        relate(fact, entity)


def _covered(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, Covered)
    entity = target(state, event, payload.entity)
    if entity is None:
        return
    if payload.criterion not in entity.criteria:
        detail = f"{payload.criterion!r} is not a criterion"
        signal(state, event, "undeclared-criterion", detail, entity.id)
    elif payload.criterion not in entity.covered:
        entity.covered.append(payload.criterion)


# --- ledger records -----------------------------------------------------------------------


def _ledger_target(state: State, event: Event, entity_id: str, kind: str) -> Fact | None:
    entity = target(state, event, entity_id)
    if entity is None:
        return None
    fact = state.ledger.get(entity_id)
    if fact is None or fact.kind != kind:
        signal(state, event, f"not-a-{kind}", f"{event.type} names a record that is not a {kind}", entity_id)
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
    entity = target(state, event, payload.entity)
    fact = state.ledger.get(payload.entity)
    if entity is None or fact is None:
        return
    for mark in payload.marks:
        if mark not in fact.reviewed:
            fact.reviewed += (mark,)


HANDLERS: dict[str, Handler] = {
    "entity.proposed": _assert,
    "entity.confirmed": _assert,
    "entity.superseded": _superseded,
    "entity.retracted": _retracted,
    "entity.placed": _placed,
    "entity.declined": _declined,
    "entity.linked": _linked,
    "entity.unlinked": _linked,
    "entity.covered": _covered,
    "entity.assessed": _assessed,
    "entity.revoked": _revoked,
    "entity.reviewed": _reviewed,
}
