"""The store's hybrid logical clock: a high-water mark of every id issued or seen.

Kept in `.local/clock` (one id and a newline). Callers hold the store lock.

The wall clock is read here and only here (`wall_ms`). `SELF_CLOCK_OFFSET_MS` (a signed
integer, default 0) is added to it: a documented way to run a process with a skewed clock,
to reproduce what a team with a wrong clock on one machine sees.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import time
from collections.abc import Iterable
from pathlib import Path

from service.adapters.store.errors import StoreError
from service.adapters.store.layout import atomic_write, overwrite
from service.core.events import ids

OFFSET_ENV = "SELF_CLOCK_OFFSET_MS"


class BadClockOffset(StoreError):
    """SELF_CLOCK_OFFSET_MS is set to something that is not a whole number of milliseconds."""


def wall_ms() -> int:
    """Milliseconds since the epoch: the system clock plus SELF_CLOCK_OFFSET_MS."""
    return time.time_ns() // 1_000_000 + _offset_ms()


def _offset_ms() -> int:
    raw = os.environ.get(OFFSET_ENV, "").strip()
    if not raw:
        return 0
    try:
        return int(raw)
    except ValueError:
        raise BadClockOffset(
            f"{OFFSET_ENV}={raw!r} is not a whole number of milliseconds; unset it or set e.g. 5000"
        ) from None


def high_water(path: Path) -> str | None:
    """The greatest id recorded, or None when the file is missing or unreadable."""
    try:
        text = path.read_text("ascii").strip()
    except (FileNotFoundError, UnicodeDecodeError):
        return None
    return text if ids.is_id(text) else None


def observe(path: Path, seen: Iterable[str], *, durable: bool = True) -> str | None:
    """Raise the high-water mark to the greatest valid id in `seen`; returns the new mark.
    An id more than ids.HORIZON_MS ahead of the wall clock is not believed: the mark stays.
    `durable=False` for ids already durable in a commit (a log's last id bounds new ones)."""
    mark = high_water(path)
    now = wall_ms()
    top = max((i for i in seen if ids.is_id(i) and not ids.beyond_horizon(i, now)), default=None)
    if top is not None and (mark is None or top > mark):
        if durable:
            atomic_write(path, top.encode("ascii") + b"\n")
        else:
            _overwrite(path, top.encode("ascii") + b"\n")
        return top
    return mark


def _overwrite(path: Path, data: bytes) -> None:
    """The mark written in place (`layout.overwrite`): one id is 27 bytes, so after a crash
    the file holds the old mark or the new one, and a lost new one is bounded by the logs'
    last ids, which bound new ids anyway."""
    path.parent.mkdir(parents=True, exist_ok=True)
    overwrite(path, data)


class Issuer:
    """Issues ids from a high-water mark: each after the mark, after the floor it is given
    and after the one before. The one rule for new ids: a transaction on disk issues through
    it (`issue`), and so does the service's group commit (`service/server/live/writer.py: Batch`)."""

    def __init__(self, mark: str | None) -> None:
        self.last = mark

    def issue(self, floor: str | None) -> str:
        """A new id after every id issued or seen and after `floor` (the log's last)."""
        last = max((i for i in (self.last, floor) if i is not None), default=None)
        self.last = ids.next_id(last, wall_ms(), secrets.randbits(80))
        return self.last

    def seen(self, last: str) -> None:
        """An id held by events appended meanwhile: the next one is issued after it."""
        if self.last is None or last > self.last:
            self.last = last


def issue(path: Path, n: int, floor: str | None) -> list[str]:
    """`n` new ids, each greater than the mark, than `floor` and than the one before."""
    issuer = Issuer(high_water(path))
    out = [issuer.issue(floor) for _ in range(n)]
    if out:
        atomic_write(path, out[-1].encode("ascii") + b"\n", durable=True)
    return out


_second: list[tuple[int, str]] = [(-1, "")]  # the last second formatted, and its text


def now() -> str:
    """The wall clock as ISO-8601 UTC with milliseconds and Z: 2026-11-30T09:57:45.069Z."""
    ms = wall_ms()
    second, text = _second[0]
    if ms // 1000 != second:  # formatted once a second: every read of the service asks
        second = ms // 1000
        text = dt.datetime.fromtimestamp(second, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.")
        _second[0] = (second, text)
    return f"{text}{ms % 1000:03d}Z"
