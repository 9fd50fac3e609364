"""Why a record waits on a person, in words, for the project page's inbox: a proposal, a
placement an agent proposed, a unit blocked on a decision, a review owed, grounds lost, a
blocker. Every record named is named by its text, never by a bare id."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.core.fold.state import Entity, Pending, State

Row = dict[str, Any]


def reasons(state: State, record: Entity, row: Row, listed: Iterable[str]) -> list[str]:
    """Each reason `record` waits on a person; `listed` names the status's lists it is on
    (`review_owed`, `unsupported`, `blocked`)."""
    from service.core.projections.views import awaits_decision

    kept = set(listed)
    found: list[str] = []
    if record.status == "proposed":
        found.append("proposed: it counts once a person confirms it")
    found += [f"a placement waits: {moves(record, p)}" for p in record.pending]
    found += [f"confirming it also places “{text_of(state, i)}”" for i in state.pairs.get(record.id, ())]
    if awaits_decision(record):
        found.append("blocked on a decision" + (f": {record.blocked_why}" if record.blocked_why else ""))
    if "review_owed" in kept:
        found += [
            f"owes a review: “{text_of(state, o['ground'])}” is {o['reason']}" for o in row["review_owed"]
        ]
    if "unsupported" in kept:
        lost = ", ".join(f"“{text_of(state, x['ground'])}” {x['reason']}" for x in row["lost"])
        found.append(f"stands on nothing any more: {lost}" if lost else "stands on nothing any more")
    if "blocked" in kept:
        found.append("blocked by " + ", ".join(f"“{t}”" for t in blockers(state, row)))
    return found


def moves(record: Entity, pending: Pending) -> str:
    """What a placement waiting would change, and why it was proposed."""
    changes = [
        f"{name} {now} → {then}"
        for name, now, then in (
            ("exposure", record.exposure, pending.exposure),
            ("priority", record.priority, pending.priority),
            ("scope", record.scope, pending.scope),
        )
        if then is not None and then != now
    ]
    said = ", ".join(changes) or "as it is"
    return f"{said} ({pending.why})" if pending.why else said


def blockers(state: State, row: Row) -> list[str]:
    """The texts of the records that block a row's record."""
    return [text_of(state, i) for i in row.get("blocked_by") or ()]


def text_of(state: State, record: str) -> str:
    found = state.entities.get(record)
    return found.text if found is not None else record
