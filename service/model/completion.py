"""The completion gate: the one answer to "may this entity be marked done"."""

from __future__ import annotations

from collections.abc import Sequence

from service.model.events import Event
from service.model.state import Entity, Report

IMPORTED = "imported"  # the refs key `self import superself` stamps on every event it brings over
SUPERSELF = "superself"


def imported_from_superself(event: Event) -> bool:
    """Whether `event` came over by `self import superself` (its history was judged there)."""
    return (event.refs or {}).get(IMPORTED) == SUPERSELF


EVIDENCE = "a report naming a commit or an artifact, or one given with the done"


def refusal(entity: Entity, reports: Sequence[Report], done_ts: str, *, judged: bool = False) -> str | None:
    """Why `entity` may not be done at `done_ts`, or None when it may (what evidence is, too)."""
    found = ruling(entity, reports, done_ts, judged=judged)
    if found is None:
        return None
    code, _, reason = found
    return f"{reason}: {EVIDENCE}" if code == "evidence-required" else reason


def ruling(
    entity: Entity, reports: Sequence[Report], done_ts: str, *, judged: bool = False
) -> tuple[str, str | None, str] | None:
    """Why `entity` may not be done at `done_ts` as (error code, the command field it
    concerns, message), or None when it may.

    Evidence is a report carrying a commit or an artifact, or a done-time report (one
    written with the done event, sharing its timestamp). Declared criteria must all be
    covered. A done `judged` by the tool that wrote it (history imported from Superself,
    whose verbs held their own gate) is checked only for the record being live and open.
    """
    if entity.status not in ("proposed", "confirmed"):
        return "refused", None, f"{entity.id} is {entity.status}; only a live record can be done"
    if entity.execution == "done":
        return "refused", None, f"{entity.id} is already done"
    if judged:
        return None
    has_evidence = any(r.commit or r.artifact or r.ts == done_ts for r in reports)
    if not has_evidence:
        return "evidence-required", "report", f"{entity.id} has no evidence"
    uncovered = [c for c in entity.criteria if c not in entity.covered]
    if uncovered:
        listed = "; ".join(uncovered)
        return "criteria-uncovered", None, f"{entity.id} has uncovered criteria: {listed}"
    return None
