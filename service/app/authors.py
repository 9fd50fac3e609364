"""Events as the readers show them: a pushed event whose claimed author (`origin.by`) is not
the user who pushed it, or that claims none, carries `pushed_by` beside its origin, so no
claimed author is shown without the user who pushed it (`adapters/store/pushes.py` keeps the
record: `relayed`, event id → pusher). Every other event is shown as written. One dict lookup
an event: the API's `events?after` and stream, `self log`, a record's history; `byline` is
the author as their text shows it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from service.core.events.events import Event, as_dict, canonical

_sorted = msgspec.json.Encoder(order="sorted")


class Attributed(Event, frozen=True, gc=False, omit_defaults=True):
    """An event with the user who pushed it, when that is not the author it claims."""

    pushed_by: str | None = None


def events(found: Sequence[Event], relayed: Mapping[str, str]) -> list[Event]:
    """`found`, each relayed one with `pushed_by`."""
    if not relayed:
        return list(found)
    return [_attributed(e, relayed.get(e.id)) for e in found]


def row(event: Event, relayed: Mapping[str, str]) -> dict[str, Any]:
    """The event as plain data (`as_dict`), with `pushed_by` when it was relayed."""
    data = as_dict(event)
    by = relayed.get(event.id)
    if by is not None:
        data["pushed_by"] = by
    return data


def line(event: Event, relayed: Mapping[str, str]) -> str:
    """The event's canonical line (without its newline), with `pushed_by` when relayed."""
    if event.id not in relayed:
        return canonical(event).decode().rstrip("\n")
    return _sorted.encode(row(event, relayed)).decode()


def byline(data: Mapping[str, Any]) -> str:
    """Who an event's row (`row`) says wrote it, for a text listing: its claimed author (`-`
    when none), and who pushed it when that was someone else."""
    origin = data.get("origin")
    by = origin.get("by") if isinstance(origin, Mapping) else None
    shown = str(by) if by else "-"
    pushed = data.get("pushed_by")
    return f"{shown} (pushed by {pushed})" if pushed else shown


def _attributed(event: Event, by: str | None) -> Event:
    if by is None:
        return event
    e = event
    return Attributed(e.id, e.ts, e.type, e.origin, e.project, e.payload, e.refs, pushed_by=by)
