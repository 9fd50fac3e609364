"""`self import superself PATH`: a Superself store (registry.jsonl, projects/<slug>/log.jsonl).

Every event is kept with its own id, legacy kinds included, and stamped
`refs.imported: "superself"`; each passes the sanitize gate through the store's import path.
Registry rows become `project.added` events, and a project Superself left archived (its own
log's last `project.archived` / `project.restored` by time) is archived in the workspace log
too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypedDict

import msgspec

from service.adapters.store import Store, clock
from service.core.commands import commands
from service.core.errors import Invalid
from service.core.events.events import (
    Event,
    Origin,
    ProjectAdded,
    ProjectChanged,
    decode_line,
    make,
    payload_of,
)
from service.core.ledger import completion


class ImportSummary(TypedDict):
    projects: dict[str, int]  # slug → events imported
    skipped_lines: dict[str, list[tuple[int, str]]]  # slug → (line, reason) of non-events


def read_registry(path: Path) -> list[dict[str, str]]:
    registry = path / "registry.jsonl"
    if not registry.is_file():
        raise Invalid(f"{path} is not a Superself store: it has no registry.jsonl")
    rows = []
    for number, line in enumerate(registry.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            commands.valid_slug(row["slug"])
        except (ValueError, KeyError, TypeError, Invalid) as exc:
            raise Invalid(f"{registry}:{number} is not a registry row ({exc}); fix or remove it") from exc
        rows.append(row)
    return rows


def read_log(path: Path) -> tuple[list[Event], list[tuple[int, str]]]:
    """The events of one Superself log, and the lines that are not events (line, reason)."""
    events: list[Event] = []
    bad: list[tuple[int, str]] = []
    if not path.is_file():
        return events, bad
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        try:
            events.append(_stamped(decode_line(line)))
        except Invalid as exc:
            bad.append((number, str(exc)))
    return events, bad


def _stamped(event: Event) -> Event:
    """The event marked as Superself's history, so the fold reads it as Superself's fold did."""
    refs = {**(event.refs or {}), completion.IMPORTED: completion.SUPERSELF}
    return msgspec.structs.replace(event, refs=refs)


def import_superself(store: Store, path: Path, origin: Origin) -> ImportSummary:
    rows = read_registry(path.expanduser())
    summary: dict[str, int] = {}
    skipped: dict[str, list[tuple[int, str]]] = {}
    for row in rows:
        slug = row["slug"]
        _register(store, slug, row.get("description"), origin)
        events, bad = read_log(path / "projects" / slug / "log.jsonl")
        vouchers = _vouchers(store, slug, events, origin)
        summary[slug] = store.import_events(slug, [*events, *vouchers]) - len(vouchers)
        if bad:
            skipped[slug] = bad
        why = archived_why(events)
        if why is not None:
            _archive(store, slug, why, origin)
    return {"projects": summary, "skipped_lines": skipped}


def _vouchers(store: Store, slug: str, events: list[Event], origin: Origin) -> list[Event]:
    """The vouchers for the evidence-free dones this import brings (written with them, in the
    same commit; as many as keep each under the event cap), so the fold reads them as
    Superself's judged history."""
    held = {e.id for e in store.read(slug).events}
    return completion.vouchers(events, held, origin, clock.now())


def archived_why(events: list[Event]) -> str | None:
    """The reason a Superself project log says it is archived for, or None when it is not
    (the last archive transition by time, then id, stands, as Superself read it)."""
    moves = sorted(
        (e for e in events if e.type in ("project.archived", "project.restored")), key=lambda e: (e.ts, e.id)
    )
    if not moves or moves[-1].type != "project.archived":
        return None
    payload = payload_of(moves[-1])
    return (payload.why if isinstance(payload, ProjectChanged) else None) or "archived in Superself"


def _archive(store: Store, slug: str, why: str, origin: Origin) -> None:
    with store.transaction("") as tx:
        clock = commands.Clock(lambda: tx.next_ids(1)[0], tx.now(), origin, "")
        if not tx.state.projects[slug].archived:
            tx.append(commands.project_archive(tx.state, clock, slug, why))


def _register(store: Store, slug: str, description: str | None, origin: Origin) -> None:
    with store.transaction("") as tx:
        if slug in tx.state.projects:
            return
        event = make(
            tx.next_ids(1)[0],
            tx.now(),
            "project.added",
            origin,
            "",
            ProjectAdded(slug, description),
        )
        tx.append([event])
