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


def refusal(entity: Entity, reports: Sequence[Report], done_ts: str, *, judged: bool = False) -> str | None:
    """Why `entity` may not be done at `done_ts`, or None when it may.

    Evidence is a report carrying a commit or an artifact, or a done-time report (one
    written with the done event, sharing its timestamp). Declared criteria must all be
    covered. A done `judged` by the tool that wrote it (history imported from Superself,
    whose verbs held their own gate) is checked only for the record being live and open.
    """
    if entity.status not in ("proposed", "confirmed"):
        return f"{entity.id} is {entity.status}; only a live record can be done"
    if entity.execution == "done":
        return f"{entity.id} is already done"
    if judged:
        return None
    has_evidence = any(r.commit or r.artifact or r.ts == done_ts for r in reports)
    if not has_evidence:
        return (
            f"{entity.id} has no evidence: add a report with --commit or --artifact, "
            "or pass --report with the done"
        )
    uncovered = [c for c in entity.criteria if c not in entity.covered]
    if uncovered:
        listed = "; ".join(uncovered)
        return f"{entity.id} has uncovered criteria: {listed} (cover each with `self state cover`)"
    return None
