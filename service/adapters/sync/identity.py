"""What the events of a remote may not do, checked before a sync or a clone changes anything.

- An id more than `ids.HORIZON_MS` (24 h) ahead of this machine's clock is refused: taken,
  it would drag the id clock with it (an id at the end of the id space makes every replica
  mint from the same point). The refusal names the remote and the id; the clock stays.
- An event this store holds must come back in the same bytes: events are never edited and
  ids never reused. The sync stops, this store keeps its copy, and the remote is flagged in
  `.local/sync/differs/<remote>.json` until a sync with it goes through; `self doctor`
  lists the flags.

The second case is never resolved by choosing a copy — not in a rebase, not in
`merge.merged_lines` — because an edit and a collision look the same and either choice silently
replaces someone's line: the fix is to put the remote's copy back. A store that never syncs
such a remote keeps working: `fold.distinct` folds a log damaged by hand deterministically and
signals `conflicting-copies`. `tests/integration/test_sync_simulation.py` runs every schedule
with each replica's clock off by its own offset (seconds to ten hours, moving mid-run) and
checks that every appended event's bytes arrive once everywhere.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path

import msgspec

from service.adapters.store import clock, layout
from service.adapters.sync import logs
from service.adapters.sync.errors import SyncError
from service.core.events import ids

FLAGS = Path("sync") / "differs"  # under the store's .local/
SHOWN = 3  # ids a message names


class AheadOfClock(SyncError):
    """A remote holds an id too far ahead of this machine's clock."""


class EventsDiffer(SyncError):
    """Two copies of an event differ in bytes (an edit, or one id used twice)."""

    def __init__(self, event_ids: list[str], holder: str = "the two histories hold") -> None:
        self.ids = event_ids
        super().__init__(
            f"{holder} {_count(event_ids)} in other bytes "
            f"than this store's copy ({_listed(event_ids)}). Events are never edited and ids never reused, "
            "so nothing was pulled or pushed and this store keeps its copy; {doctor} lists them. "
            "Put the remote's copy back as it was (e.g. `git revert` the commit that changed it, in a "
            "clone of the remote) and sync again",
            field="doctor",
        )


class Flag(msgspec.Struct):
    """A remote whose last sync stopped on events it holds in other bytes."""

    remote: str
    url: str
    ids: list[str]
    seen: str  # when (ISO-8601 UTC)


def check_horizon(found: Iterable[str], name: str, shown: str) -> None:
    """Refuse the ids of `found` (fetched from remote `name`) too far ahead of the wall clock."""
    top = max(found, default=None)
    now = clock.wall_ms()
    if top is None or not ids.beyond_horizon(top, now):
        return
    ahead = ids.time_ms(top) - now
    raise AheadOfClock(
        f"remote {name} ({shown}) holds event {top}, whose id is dated {_span(ahead)} ahead of this "
        f"machine's clock; ids from elsewhere may be at most {ids.HORIZON_MS // 3_600_000} h ahead. "
        "Nothing was pulled or pushed and the id clock did not move. Fix the clock of the machine "
        "that wrote it (or this one's, if it is behind) and have that event removed from the remote"
    )


def differing(remote: list[bytes], local: list[bytes]) -> list[str]:
    """The ids of `remote` with two copies in other bytes: on the remote itself, or against
    a copy in `local`. Lines that name no id are not compared."""
    first: dict[str, bytes] = {}
    found: set[str] = set()
    for line in remote:
        event_id = logs.line_id(line)
        if event_id is None:
            continue
        if first.setdefault(event_id, line) != line:
            found.add(event_id)
    for line in local:
        event_id = logs.line_id(line)
        if event_id is not None and event_id in first and first[event_id] != line:
            found.add(event_id)
    return sorted(found)


def refused(local_dir: Path, name: str, shown: str, event_ids: list[str]) -> EventsDiffer:
    """Flag remote `name` for `event_ids` (the caller holds the store lock); the error to raise."""
    flag = Flag(name, shown, event_ids, clock.now())
    layout.atomic_write(_flag_path(local_dir, name), msgspec.json.encode(flag) + b"\n")
    return EventsDiffer(event_ids, f"remote {name} ({shown}) holds")


def clear(local_dir: Path, name: str) -> None:
    """A sync with `name` went through: it no longer holds other bytes of a local event."""
    _flag_path(local_dir, name).unlink(missing_ok=True)


def flags(local_dir: Path) -> list[Flag]:
    """Every flagged remote, by name."""
    found = []
    for path in sorted((local_dir / FLAGS).glob("*.json")):
        with contextlib.suppress(OSError, msgspec.DecodeError, msgspec.ValidationError):
            found.append(msgspec.json.decode(path.read_bytes(), type=Flag))
    return found


def _flag_path(local_dir: Path, name: str) -> Path:
    return local_dir / FLAGS / f"{name}.json"


def _count(event_ids: list[str]) -> str:
    return "1 event" if len(event_ids) == 1 else f"{len(event_ids)} events"


def _listed(event_ids: list[str]) -> str:
    more = len(event_ids) - SHOWN
    return ", ".join(event_ids[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def _span(ms: int) -> str:
    hours = ms / 3_600_000
    return f"{hours:.1f} h" if hours < 48 else f"{hours / 24:,.0f} days"
