"""What arrived in a workspace lately, in arrival order: the source of the live stream and of
`events?after`. Writers publish from the writer thread (or a catch-up, the store lock held);
readers (async stream handlers) wait on it without holding a thread each.

Each event is numbered when it arrives — posted, pushed, synced or fetched by a mirror round —
by the store's arrival journal (`adapters/store/arrivals.py`), whatever its id: a reader's
cursor (`EPOCH.N`, `cursor`) is such a number, and what came after it is what it has not
seen. The feed keeps the last `KEEP` (20,000) events in memory; a reader further behind reads
the journal and the logs.

A reader costs what it is sent: `since` finds its place by bisection and hands at most `MOST`
events a wake (no copy of what is kept), and `rendered` encodes each event once for all. One
that does not read waits on its socket, and is cut after a while (`paced.py`); leaving costs
O(1).
"""

from __future__ import annotations

import asyncio
import bisect
import re
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from service.core.events.events import Event

if TYPE_CHECKING:
    from service.adapters.store import Store
    from service.adapters.store.arrivals import Arrivals

KEEP = 20_000  # events kept; a reader further behind reads the journal and the logs
MOST = 500  # events handed to a reader a wake
RENDERED = 4 * MOST  # events kept as their streams send them
CURSOR = re.compile(r"^([0-9a-f]{8})\.([0-9]{1,18})$")


def cursor_form(text: str) -> tuple[str, int] | None:
    """(epoch, number) of a cursor; None for anything else (an event id is never one)."""
    found = CURSOR.match(text)
    return None if found is None else (found[1], int(found[2]))


class Waiter:
    """One async reader's wake-up, set from any thread when the feed moves or closes, or when
    its stream must end (`ended`: why)."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.moved = asyncio.Event()
        self.ended: str | None = None

    def wake(self) -> None:
        self.loop.call_soon_threadsafe(self.moved.set)

    def end(self, why: str) -> None:
        self.ended = why
        self.wake()

    async def wait(self, timeout: float) -> None:
        """Until the feed moves, it closes, or `timeout` seconds pass; then re-armed."""
        with suppress(TimeoutError):
            await asyncio.wait_for(self.moved.wait(), timeout)
        self.moved.clear()


class Feed:
    """The last `keep` events that arrived in one workspace, numbered, and who waits for more."""

    def __init__(
        self,
        keep: int = KEEP,
        arrivals: Arrivals | None = None,
        head: Callable[[], str | None] = lambda: None,
    ) -> None:
        self._lock = threading.Lock()
        self._keep = keep
        self._seqs: list[int] = []  # ascending: the numbers of the kept events
        self._events: list[Event] = []
        self._by_id: dict[str, int] = {}  # a kept event's id → its number
        self._arrivals = arrivals
        self._head = head
        self.epoch = arrivals.epoch if arrivals is not None else secrets.token_hex(4)
        self._published = arrivals.end if arrivals is not None else 0
        self._first = self._published  # every event after this number is kept
        self._waiters: set[Waiter] = set()
        self._rendered: dict[int, bytes] = {}  # oldest made first
        self.watch = Watch()
        self.closed = False

    @classmethod
    def of(cls, store: Store) -> Feed:
        """The feed of a hosted store, numbered by its arrival journal, brought up to its head."""
        from service.adapters.store.arrivals import Arrivals, bring_up

        arrivals = Arrivals(store.local_dir)
        with store.locked():
            bring_up(arrivals, store.root, store.logs(), store.head())
        return cls(arrivals=arrivals, head=store.head)

    def publish_missing(self, store: Store) -> None:
        """Publish every event of the store's logs the journal lacks, each log's in id order
        (main moved where nothing was served yet: `outside.take`; the store lock held)."""
        from service.adapters.store.segments import ids_of, read_ids

        if self._arrivals is None:
            return
        found: list[Event] = []
        for log in store.logs():
            missing = set(ids_of(store.root, log)) - self._arrivals.known(log)
            found += sorted(read_ids(store.root, log, missing).values(), key=lambda e: e.id)
        self.publish(found)

    @property
    def arrivals(self) -> Arrivals | None:
        return self._arrivals

    def cursor(self, seq: int) -> str:
        return f"{self.epoch}.{seq}"

    def publish(self, events: list[Event]) -> None:
        """Events that arrived (the store lock held): each not taken before gets the next number."""
        if self._arrivals is not None:
            numbers = self._arrivals.take([(e.project, e.id) for e in events], self._head())
        else:
            numbers = list(range(self._published + 1, self._published + 1 + len(events)))
        with self._lock:
            for event, seq in zip(events, numbers, strict=True):
                if seq is not None:
                    self._seqs.append(seq)
                    self._events.append(event)
                    self._by_id[event.id] = seq
                    self._published = seq
            self._trim()
            waiters = list(self._waiters)
        for waiter in waiters:
            waiter.wake()

    def _trim(self) -> None:
        """Forget the oldest half once twice `keep` are held (O(1) a publish, amortized)."""
        if len(self._seqs) < 2 * self._keep:
            return
        cut = len(self._seqs) - self._keep
        for event in self._events[:cut]:
            self._by_id.pop(event.id, None)
        self._first = self._seqs[cut - 1]
        del self._seqs[:cut], self._events[:cut]

    def end(self) -> int:
        """The number of the newest event: `since(end())` is what comes next."""
        with self._lock:
            return self._published

    def mark_of(self, event_id: str) -> int | None:
        """The number of the kept event `event_id`; None when it is not kept."""
        with self._lock:
            return self._by_id.get(event_id)

    def since(self, mark: int, most: int = MOST) -> list[tuple[int, Event]] | None:
        """The first `most` events that arrived after number `mark`, with their numbers; None
        when some of them are no longer kept (the reader reads the journal and the logs)."""
        with self._lock:
            if mark < self._first:
                return None
            at = bisect.bisect_right(self._seqs, mark)
            return list(zip(self._seqs[at : at + most], self._events[at : at + most], strict=True))

    def get(self, event_id: str) -> Event | None:
        """The kept event of that id, if it is kept."""
        with self._lock:
            seq = self._by_id.get(event_id)
            if seq is None:
                return None
            return self._events[bisect.bisect_left(self._seqs, seq)]

    def rendered(self, seq: int, render: Callable[[], bytes]) -> bytes:
        """What `render` makes of the event numbered `seq`, made once for all its readers and
        kept for the last `RENDERED` made (the event loop's only: no lock)."""
        made = self._rendered.get(seq)
        if made is None:
            made = self._rendered[seq] = render()
            if len(self._rendered) > RENDERED:
                del self._rendered[next(iter(self._rendered))]
        return made

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


def arrived(feed: Feed, root: Path, log: str | None, mark: int, limit: int) -> list[tuple[int, Event]]:
    """The events (of `log` only, when named) that arrived after number `mark`, at most
    `limit`, with their numbers, in arrival order: kept ones from memory, the rest read from
    their logs. An event its log does not hold yet (a push whose files are being written)
    ends the answer before it: it is there the next time."""
    from service.adapters.store.segments import read_ids

    if feed.arrivals is None:
        return [(seq, e) for seq, e in feed.since(mark, limit) or [] if log is None or e.project == log]
    rows = feed.arrivals.after(log, mark, limit)
    bodies: dict[tuple[str, str], Event | None] = {(lg, i): feed.get(i) for _, lg, i in rows}
    wanted: dict[str, set[str]] = {}
    for (in_log, event_id), body in bodies.items():
        if body is None or body.project != in_log:
            wanted.setdefault(in_log, set()).add(event_id)
    for in_log, ids in wanted.items():
        bodies.update(((in_log, i), e) for i, e in read_ids(root, in_log, ids).items())
    found: list[tuple[int, Event]] = []
    for seq, in_log, event_id in rows:
        body = bodies.get((in_log, event_id))
        if body is None:
            break
        found.append((seq, body))
    return found


EVERY_S = 1.0  # how often the credentials of a workspace's open streams are checked again


class Watch:
    """The credentials of a workspace's open streams, checked again together once a second:
    one worker thread a round, one check per credential however many streams hold it. A stream
    whose credential no longer holds (a token revoked, its role changed) is ended."""

    def __init__(self, every: float = EVERY_S) -> None:
        self._every = every
        self._held: dict[bytes, tuple[Callable[[], bool], set[Waiter]]] = {}  # the loop's only
        self._task: asyncio.Task[None] | None = None

    @contextmanager
    def holding(self, key: bytes, still: Callable[[], bool], waiter: Waiter) -> Iterator[None]:
        """While the block runs, `still()` (run in a worker thread) says whether the credential
        `key` names still holds; when it does not, `waiter` is ended. On the event loop."""
        entry = self._held.setdefault(key, (still, set()))
        entry[1].add(waiter)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())
        try:
            yield
        finally:
            entry[1].discard(waiter)
            if not entry[1] and self._held.get(key) is entry:
                del self._held[key]

    async def _run(self) -> None:
        import anyio.to_thread

        while self._held:
            await asyncio.sleep(self._every)
            checks = [(key, still) for key, (still, _) in self._held.items()]
            failed = await anyio.to_thread.run_sync(_failing, checks)
            for key in failed:
                for waiter in list(self._held.get(key, (None, set()))[1]):
                    waiter.end("revoked")


def _failing(checks: list[tuple[bytes, Callable[[], bool]]]) -> list[bytes]:
    """The keys whose check says no (a check that fails to answer says no)."""
    failed: list[bytes] = []
    for key, still in checks:
        try:
            holds = still()
        except Exception:
            holds = False
        if not holds:
            failed.append(key)
    return failed
