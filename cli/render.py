"""Rendering of write results: one line per event, or JSON."""

from __future__ import annotations

from cli.common import echo, emit_json
from service.app.queries import Row


def written(rows: list[Row], as_json: bool) -> None:
    """The events a write appended (`queries.event_row` each): one line each, or JSON."""
    if as_json:
        emit_json({"events": rows})
        return
    for row in rows:
        payload = row.get("payload")
        subject = ""
        if isinstance(payload, dict):
            subject = str(payload.get("entity") or payload.get("work") or payload.get("slug") or "")
        echo(f"{row['type']} {subject}".rstrip() + f"  ({row['id']})")
