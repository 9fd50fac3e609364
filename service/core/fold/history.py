"""One record's own events, oldest first: the only path to its history."""

from __future__ import annotations

from collections.abc import Iterable

from service.core.events.events import Event


def events_of(entity_id: str, events: Iterable[Event]) -> list[Event]:
    """Events that name `entity_id` as subject, work, link target or supersession."""
    needle = entity_id.encode()
    found = []
    for event in events:
        if needle not in bytes(event.payload) and not _refs_name(event, entity_id):
            continue
        found.append(event)
    return sorted(found, key=lambda e: e.id)


def _refs_name(event: Event, entity_id: str) -> bool:
    return bool(event.refs) and entity_id in (event.refs or {}).values()
