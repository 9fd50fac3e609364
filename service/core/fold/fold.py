"""The fold: events in id order → state. Pure and deterministic.

`fold` advances a state it owns by events whose ids are greater than the state's last id;
`fold_all` sorts any collection of events by id, drops duplicate copies and folds them from
nothing. One handler per event type (`fold_records.py`: a record's life; `fold_work.py`: work
and projects); each reads the typed payload and edits the state.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from service.core.events import order
from service.core.events.events import Event, Legacy, Payload, payload_of
from service.core.fold import legacy, undo
from service.core.fold import records as fold_records
from service.core.fold import work as fold_work
from service.core.fold.records import Handler
from service.core.fold.state import Signal, State


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


# --- legacy Superself kinds -----------------------------------------------------------


def _legacy(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, Legacy)
    legacy.read(state, event, payload, HANDLERS)


HANDLERS: dict[str, Handler] = fold_records.HANDLERS | fold_work.HANDLERS
