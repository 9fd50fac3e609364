"""The completion gate: the one answer to "may this entity be marked done"."""

from __future__ import annotations

from collections.abc import Sequence

from service.model.state import Entity, Report

EVIDENCE = "a report naming a commit or an artifact, or one given with the done"


def refusal(entity: Entity, reports: Sequence[Report], done_ts: str) -> str | None:
    """Why `entity` may not be done at `done_ts`, or None when it may (what evidence is, too)."""
    found = ruling(entity, reports, done_ts)
    if found is None:
        return None
    code, _, reason = found
    return f"{reason}: {EVIDENCE}" if code == "evidence-required" else reason


def ruling(entity: Entity, reports: Sequence[Report], done_ts: str) -> tuple[str, str | None, str] | None:
    """Why `entity` may not be done at `done_ts` as (error code, the command field it
    concerns, message), or None when it may.

    Evidence is a report carrying a commit or an artifact, or a done-time report (one
    written with the done event, sharing its timestamp). Declared criteria must all be
    covered.
    """
    if entity.status not in ("proposed", "confirmed"):
        return "refused", None, f"{entity.id} is {entity.status}; only a live record can be done"
    if entity.execution == "done":
        return "refused", None, f"{entity.id} is already done"
    has_evidence = any(r.commit or r.artifact or r.ts == done_ts for r in reports)
    if not has_evidence:
        return "evidence-required", "report", f"{entity.id} has no evidence"
    uncovered = [c for c in entity.criteria if c not in entity.covered]
    if uncovered:
        listed = "; ".join(uncovered)
        return "criteria-uncovered", None, f"{entity.id} has uncovered criteria: {listed}"
    return None
