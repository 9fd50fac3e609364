"""The order of a log: which copy of an id wins, and what "after" means. Pure.

Ids are the order: a log's events come in strictly increasing id order, each id once. Where a
log holds an id twice (a hand edit, a plain-git merge), every reader and repairer keeps the
same copy, the winner: a copy that is an event beats one that is not, then the copy whose
canonical bytes (`events.canonical`) sort first, then the one whose own bytes sort first. So
the fold of a damaged log, `self doctor --repair`, the fold cache, a sync's local-only events
and an import all keep the same copy. (A sync refuses a remote that holds an id in other bytes
than this store, `service/adapters/sync/identity.py`: there nothing is chosen.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

import msgspec

from service.core.events.events import Event, canonical, decode_unchecked

T = TypeVar("T")

Rank = tuple[int, bytes, bytes]


def event_rank(event: Event) -> Rank:
    """Where a decoded copy stands among the copies of its id (lower wins)."""
    line = canonical(event)
    return 0, line, line


def line_rank(line: bytes) -> Rank:
    """Where a log line stands among the copies of its id (lower wins): the rank of the event
    it decodes to, its own bytes breaking a tie; after every event when it decodes to none."""
    body = line.rstrip(b"\n")
    try:
        event = decode_unchecked(body)
        return 0, canonical(event), body
    except (msgspec.DecodeError, msgspec.ValidationError):
        return 1, body, body


def wins(copy: T, other: T, rank: Callable[[T], Rank]) -> bool:
    """True when `copy` is kept over `other` (two copies of one id)."""
    return rank(copy) < rank(other)


def after(event_id: str, last: str | None) -> bool:
    """True when `event_id` may follow `last` (None: the start of a log)."""
    return last is None or event_id > last


def not_after(ids: Iterable[str], last: str | None = None) -> tuple[str, str] | None:
    """The first id that is not strictly after the one before it (or `last`), with that one;
    None when the ids strictly increase after `last`."""
    previous = last
    for event_id in ids:
        if previous is not None and not after(event_id, previous):
            return event_id, previous
        previous = event_id
    return None


def ascending(ids: Iterable[str], last: str | None = None) -> bool:
    """True when the ids strictly increase after `last`."""
    return not_after(ids, last) is None


class Distinct(msgspec.Struct, Generic[T]):
    """One copy of each id, the winner, in id order; and the ids whose copies differ."""

    kept: list[T]
    conflicts: list[str]  # sorted
    repeats: int = 0  # copies dropped (equal or not)


def distinct(copies: Iterable[T], id_of: Callable[[T], str], rank: Callable[[T], Rank]) -> Distinct[T]:
    """The winning copy of each id, in id order (`rank` is called only where copies differ)."""
    by_id: dict[str, T] = {}
    conflicts: set[str] = set()
    repeats = 0
    for copy in copies:
        key = id_of(copy)
        held = by_id.get(key)
        if held is None:
            by_id[key] = copy
            continue
        repeats += 1
        if held != copy:
            conflicts.add(key)
            if wins(copy, held, rank):
                by_id[key] = copy
    return Distinct([by_id[k] for k in sorted(by_id)], sorted(conflicts), repeats)


def winners(named: Iterable[tuple[str, bytes]]) -> dict[str, bytes]:
    """The winning line of each id among (id, line) pairs."""
    chosen = distinct(named, _first, _line_rank_of)
    return dict(chosen.kept)


def _first(pair: tuple[str, bytes]) -> str:
    return pair[0]


def _line_rank_of(pair: tuple[str, bytes]) -> Rank:
    return line_rank(pair[1])
