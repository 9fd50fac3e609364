"""When a proposal stops waiting on a person: Superself's expiry, judged at a given instant.

Superself left two kinds of proposal out of everything that waits on a person once they were
old: a proposed decision more than 14 days after it was made (`PROPOSAL_EXPIRY_DAYS` in its
`model.ts`), and a work proposal once the day it named with `--expires` has passed
(`objectives.ts`, `deriveGoals`). Neither is withdrawn: the record stays proposed and can still
be confirmed, it just no longer asks for attention.

The fold reads no clock. It keeps the facts (`Entity.proposed_at`, the creating event's
timestamp, and `Entity.expires`, the date as written); the views that take `now` from their
caller — status, context, the web view's waiting list — ask `lapsed(e, now)`. `now` is an
ISO-8601 instant; `None` means no clock, and nothing lapses.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from service.core.fold.state import Entity

DECISION_DAYS = 14
_DECISION_SPAN = dt.timedelta(days=DECISION_DAYS)
# The record kind Superself read from labels: the first of these a record carries.
_KINDS = ("goal", "decision", "convention", "objective", "milestone", "work")


def kind_of(e: Entity) -> str | None:
    """Superself's kind of a record: the first preset label in its fixed order, if any."""
    return next((kind for kind in _KINDS if kind in e.labels), None)


def lapsed(e: Entity, now: str | None) -> bool:
    """Whether proposal `e` no longer waits on a person at instant `now`."""
    if now is None or e.status != "proposed" or not e.live:
        return False
    kind = kind_of(e)
    if kind == "decision":
        return _older_than_span(e.proposed_at, now)
    if kind == "work":
        return _day_passed(e.expires, now)
    return False


def lapses_at(e: Entity) -> str | None:
    """The first instant (ISO-8601 UTC, milliseconds, as the clock writes it) at which
    proposal `e` is lapsed, or None when it never lapses: `lapsed(e, now)` is true exactly
    for `now` at or after it, while `e` stays what it is."""
    if e.status != "proposed" or not e.live:
        return None
    kind = kind_of(e)
    if kind == "decision":
        start = _instant(e.proposed_at)
        moment = None if start is None else start + _DECISION_SPAN + dt.timedelta(milliseconds=1)
    elif kind == "work":
        day = _day(e.expires)
        moment = None if day is None else dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), dt.UTC)
    else:
        return None
    return None if moment is None else _text(moment)


def marks(entities: Iterable[Entity]) -> list[str]:
    """The sorted instants at which the proposals among `entities` lapse: two instants with
    as many marks at or before them judge every one of these proposals alike."""
    return sorted(m for m in map(lapses_at, entities) if m is not None)


def _text(moment: dt.datetime) -> str:
    utc = moment.astimezone(dt.UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def _older_than_span(made: str | None, now: str) -> bool:
    """More than 14 days from `made` to `now`, to the millisecond (an unreadable time never
    lapses, as Superself's date arithmetic gave no number for one)."""
    start, end = _instant(made), _instant(now)
    return start is not None and end is not None and end - start > _DECISION_SPAN


def _day_passed(expires: str | None, now: str) -> bool:
    """The day `expires` names is before `now`'s day (UTC, the store's only zone)."""
    day, end = _day(expires), _instant(now)
    return day is not None and end is not None and day < end.astimezone(dt.UTC).date()


def _instant(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def _day(text: str | None) -> dt.date | None:
    if not text or len(text) != 10:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None
