"""Rendering of write results: one line per event, or JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cli.common import echo, emit_json
from service.app.queries import event_row

if TYPE_CHECKING:
    from service.model.events import Event


def written(events: list[Event], as_json: bool) -> None:
    rows = [event_row(e) for e in events]
    if as_json:
        emit_json({"events": rows})
        return
    for row in rows:
        payload = row.get("payload")
        subject = ""
        if isinstance(payload, dict):
            subject = str(payload.get("entity") or payload.get("work") or payload.get("slug") or "")
        echo(f"{row['type']} {subject}".rstrip() + f"  ({row['id']})")
