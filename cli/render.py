"""Rendering of write results: one line per event, or JSON."""

from __future__ import annotations

from cli.common import echo, emit_json
from service.model.events import Event, as_dict


def written(events: list[Event], as_json: bool) -> None:
    if as_json:
        emit_json({"events": [as_dict(e) for e in events]})
        return
    for event in events:
        data = as_dict(event)
        payload = data.get("payload")
        subject = ""
        if isinstance(payload, dict):
            subject = str(payload.get("entity") or payload.get("work") or payload.get("slug") or "")
        echo(f"{event.type} {subject}".rstrip() + f"  ({event.id})")


def subject(event: Event, full: bool = False) -> str:
    """A short description of what an event is about, for log listings."""
    data = as_dict(event)
    payload = data.get("payload")
    if not isinstance(payload, dict):
        return ""
    parts = [str(payload[k]) for k in ("entity", "work", "slug") if k in payload]
    text = payload.get("text") or payload.get("why") or payload.get("criterion")
    if text:
        text = str(text)
        parts.append(text if full or len(text) <= 60 else text[:57] + "...")
    return "  ".join(parts)
