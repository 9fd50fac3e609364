"""The completion gate: the one answer to "may this entity be marked done".

`ruling` says why a done is refused (the error code, field and reason; `refusal` is its text
with what evidence is). Given `judged=True` — a marked done (`entity.done`, or a legacy close
of `LEGACY_DONES`) that one of an import's vouchers named before it (`import.superself`,
`vouchers`: up to `VOUCHED_PER_EVENT` dones each, each voucher placed just before the first
done it names) — it checks only that the record is live and open. Only the importer writes the
mark and the voucher: the append gate refuses both on every other write. Called by
`commands.done` before writing, by the fold's `entity.done` handler when reading (a legacy
close no voucher names goes through it too), and by `self work show`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from service.core.events import ids
from service.core.events.events import VOUCHER, Event, Origin, Payload, Vouched, make
from service.core.fold.state import LIVE_STATUSES, Entity, Report, State

IMPORTED = "imported"  # the refs key `self import superself` stamps on every event it brings over
SUPERSELF = "superself"
# Superself's pre-entity closes, read as dones (`legacy.py`): a unit done, a milestone
# reached, an objective closed (as reached; a close as dropped is a withdrawal, no done).
LEGACY_DONES = frozenset({"work.done", "milestone.reached", "objective.closed"})


def imported_from_superself(event: Event) -> bool:
    """Whether `event` carries the mark of `self import superself`. The mark alone proves
    nothing (any event can carry it): the fold relaxes the gate for a done — `entity.done`
    or a legacy close (`LEGACY_DONES`) — only when an import's voucher names it
    (`State.vouched`, `vouchers`)."""
    return (event.refs or {}).get(IMPORTED) == SUPERSELF


def vouched(state: State, event: Event) -> bool:
    """Whether `event` is a done Superself judged: marked by the import, and named by a
    voucher the fold has read before it."""
    return imported_from_superself(event) and event.id in state.vouched


def vouch(state: State, event: Event, payload: Payload) -> None:
    """The fold's handler of `import.superself`: the dones it names were judged by Superself.
    An import of many dones writes several vouchers; each adds the dones it names."""
    assert isinstance(payload, Vouched)
    for judged in payload.judged:
        state.vouched.setdefault(judged, event.id)


def _judged_done(event: Event) -> bool:
    return (event.type == "entity.done" or event.type in LEGACY_DONES) and imported_from_superself(event)


# How many dones one voucher names: each id costs 29 bytes of its line, so a full voucher is
# about 29 KB, under half the event cap (`MAX_EVENT_BYTES`); a larger import writes several.
VOUCHED_PER_EVENT = 1_000


def vouchers(
    events: Sequence[Event], taken: Collection[str], origin: Origin, ts: str, *, per: int = VOUCHED_PER_EVENT
) -> list[Event]:
    """The `import.superself` events for the marked dones among `events` that are not already
    in the log (`taken` holds its ids): the dones in id order, `per` to a voucher, each voucher
    with the greatest free id before the first done it names, so a fold in id order reads it
    before every done it names. Empty when there is nothing to vouch for."""
    judged = sorted(e.id for e in events if _judged_done(e) and e.id not in taken)
    busy = set(taken) | {e.id for e in events}
    found = []
    for start in range(0, len(judged), per):
        names = tuple(judged[start : start + per])
        value = ids.decode(names[0]) - 1
        while ids.encode(value) in busy:
            value -= 1
        busy.add(ids.encode(value))
        found.append(make(ids.encode(value), ts, VOUCHER, origin, events[0].project, Vouched(names)))
    return found


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
    if entity.status not in LIVE_STATUSES:
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
