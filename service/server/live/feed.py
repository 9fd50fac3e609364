"""What a workspace committed lately, in commit order: the source of the live stream and of
`events?after` for recent ids. Writers publish from the writer thread; readers (async stream
handlers) wait on it without holding a thread each.

It keeps the last `KEEP` (20,000) events; a reader further behind (a `Last-Event-ID` that old)
reads the logs.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from service.core.events.events import Event

KEEP = 20_000  # events kept; a reader further behind reads the logs


class Waiter:
    """One async reader's wake-up, set from any thread when the feed moves or closes."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.moved = asyncio.Event()

    def wake(self) -> None:
        self.loop.call_soon_threadsafe(self.moved.set)

    async def wait(self, timeout: float) -> None:
        """Until the feed moves, it closes, or `timeout` seconds pass; then re-armed."""
        with suppress(TimeoutError):
            await asyncio.wait_for(self.moved.wait(), timeout)
        self.moved.clear()


class Feed:
    """The last `keep` committed events of one workspace and who waits for more."""

    def __init__(self, keep: int = KEEP) -> None:
        self._lock = threading.Lock()
        self._ring: deque[Event] = deque(maxlen=keep)
        self._seq: dict[str, int] = {}  # id → position in publication order
        self._published = 0
        self._waiters: set[Waiter] = set()
        self.closed = False

    def publish(self, events: list[Event]) -> None:
        with self._lock:
            for event in events:
                if len(self._ring) == self._ring.maxlen:
                    self._seq.pop(self._ring[0].id, None)
                self._ring.append(event)
                self._seq[event.id] = self._published
                self._published += 1
            waiters = list(self._waiters)
        for waiter in waiters:
            waiter.wake()

    def end(self) -> int:
        """The mark of what is published now: `since(end())` is what comes next."""
        with self._lock:
            return self._published

    def mark_of(self, event_id: str) -> int | None:
        """The mark just after the kept event `event_id`; None when it is not kept."""
        with self._lock:
            seq = self._seq.get(event_id)
            return None if seq is None else seq + 1

    def since(self, mark: int) -> tuple[list[Event], int] | None:
        """The events published from `mark` on and the mark after them; None when some of
        them are no longer kept (the reader is too far behind: it reads the logs)."""
        with self._lock:
            first = self._published - len(self._ring)
            if mark < first:
                return None
            return list(self._ring)[mark - first :], self._published

    def get(self, event_id: str) -> Event | None:
        """The kept event of that id, if it is kept."""
        with self._lock:
            seq = self._seq.get(event_id)
            if seq is None:
                return None
            return self._ring[seq - (self._published - len(self._ring))]

    @contextmanager
    def waiting(self) -> Iterator[Waiter]:
        waiter = Waiter()
        with self._lock:
            self._waiters.add(waiter)
        try:
            yield waiter
        finally:
            with self._lock:
                self._waiters.discard(waiter)

    @property
    def subscribers(self) -> int:
        with self._lock:
            return len(self._waiters)

    def close(self) -> None:
        """Wake every reader for the last time: the service is stopping."""
        with self._lock:
            self.closed = True
            waiters = list(self._waiters)
        for waiter in waiters:
            waiter.wake()
