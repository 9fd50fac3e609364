"""Superself's undo: an `entity.restored` whose `refs.annuls` names the event it takes back.

Superself's fold skips an annulled withdrawal, retirement or link, and an annulled creation
keeps its record but loses the supersessions it made. selfhub's fold reads in id order, so
each record remembers what its last undoable transition changed (`state.Undo`) and an
annulment puts that back; an annulment read before the event it names (a clock behind)
waits in `State.annulled` and the event is skipped when it comes.
"""

from __future__ import annotations

import msgspec

from service.core.events.events import Assertion, Event, Link, Payload
from service.core.fold.state import LIVE_STATUSES, Entity, Signal, State, Undo


def annulled_id(event: Event) -> str | None:
    """The event an `entity.restored` takes back, or None when it names none."""
    annuls = (event.refs or {}).get("annuls")
    return annuls if isinstance(annuls, str) and annuls else None


def remember_status(entity: Entity, event_id: str) -> None:
    """Before a withdrawal or a supersession by `event_id` changes the record's status."""
    entity.undo = Undo(
        event_id, status=entity.status, closed_why=entity.closed_why, superseded_by=entity.superseded_by
    )


def remember_execution(entity: Entity, event_id: str) -> None:
    """Before a retirement changes the record's working state."""
    entity.undo = Undo(
        event_id, execution=entity.execution, closed_why=entity.closed_why, superseded_by=entity.superseded_by
    )


def remember_link(entity: Entity, event_id: str, link: Link) -> None:
    entity.undo = Undo(event_id, link=link)


def taken_back(state: State, event_id: str, payload: Payload) -> Payload | None:
    """An event annulled before it was read: skipped, or a creation without its supersessions."""
    state.annulled.remove(event_id)
    if not isinstance(payload, Assertion):
        return None
    links = [link for link in payload.links if link.type != "supersedes"]
    return msgspec.structs.replace(payload, links=links)


def annul(state: State, event: Event, entity_id: str, annulled: str) -> list[Entity]:
    """Take back `annulled` on the record `entity_id` names (and, for a supersession, on every
    record the same creation superseded); the records changed. When that event is not the
    record's last undoable transition, nothing changes and a health signal says so."""
    if annulled > event.id:  # not folded yet: skipped when it comes
        state.annulled.append(annulled)
        return []
    entity = state.entities.get(entity_id)
    if entity is None or entity.undo is None or entity.undo.event != annulled:
        detail = f"{annulled} is not the last withdrawal, retirement, supersession or link of {entity_id}"
        state.signals.append(Signal("undo-not-applied", event.id, detail, entity_id))
        return []
    memory = entity.undo
    if memory.link is not None:
        if memory.link in entity.links:
            entity.links.remove(memory.link)
        entity.undo = None
        return [entity]
    if memory.status is None:
        _put_back(entity, memory, event.id)
        entity.execution = memory.execution
        return [entity]
    successor = state.entities.get(entity.superseded_by or "") if entity.status == "superseded" else None
    changed = [entity]
    if successor is not None and successor.created == annulled:
        changed = [state.entities[t] for t in successor.supersedes if _undone_by(state, t, annulled)]
        successor.links = [link for link in successor.links if link.type != "supersedes"]
        changed.append(successor)
    for record in changed:
        if record.undo is not None and record.undo.event == annulled:
            _put_back(record, record.undo, event.id)
            _restore_fact(state, record, event.id)
    return changed


def _undone_by(state: State, entity_id: str, annulled: str) -> bool:
    record = state.entities.get(entity_id)
    return record is not None and record.undo is not None and record.undo.event == annulled


def _put_back(entity: Entity, memory: Undo, event_id: str) -> None:
    if memory.status is not None:
        entity.status = memory.status
    entity.closed_why = memory.closed_why
    entity.superseded_by = memory.superseded_by
    entity.updated = event_id
    entity.undo = None


def _restore_fact(state: State, entity: Entity, event_id: str) -> None:
    fact = state.ledger.get(entity.id)
    if fact is not None:
        fact.current = entity.status in LIVE_STATUSES
        fact.retracted = entity.status == "retracted"
        fact.superseded_by = entity.superseded_by
        fact.changed = event_id
