"""One workspace held open by the service: every log's folded state in memory, advanced by
each append (never refolded per request), read under a shared lock, written by one writer
thread (`writer.py`) that holds the store lock for a whole batch. Beside each state its hot
slice (`hotslice.Kept`), advanced with it: context and status read that, as the CLI reads
the slice cache on disk, so they cost what they render, not the history.

The states change only in `apply` (the writer, after a job's events passed every check) and
`load` (at start, and when the store's head moved under the service: a CLI or a sync wrote
into the store directly). Readers never wait for a batch's fsync: the write lock is held
only while a job's events are folded, microseconds to milliseconds. A reader may see a
job's events while its commit is still being fsynced; if that commit fails, the states are
loaded again from disk and the job is answered with the failure.

Rendered answers are kept per state version and rendered once: callers asking while one is
rendered wait for that rendering (`rendering`, `routes.remembered`). `settled` is true while
the writer holds the store lock: main then moves only by its hand, and it takes a write from
outside first, so a read in that window neither waits for the lock nor takes the writer's
commit for a write from outside.
"""

from __future__ import annotations

import bisect
import os
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from readerwriterlock import rwlock

from service.adapters.store import Quarantine, Store, cache
from service.adapters.store.unit import Unit
from service.core.events import order
from service.core.events.events import WORKSPACE_LOG, Event
from service.core.fold import lapse
from service.core.fold.hotslice import Kept
from service.core.fold.state import State
from service.server.live.feed import Feed
from service.server.live.jobs import Job


class Observer(Protocol):
    """Where the service's counters go (`service/server/api/metrics.py`)."""

    def batch_committed(self, workspace: str, events: int) -> None: ...

    def fold_lag(self, workspace: str, events: int) -> None: ...

    def outside_write(self, workspace: str, events: int, refused: str | None, commit: str) -> None: ...


class Committer(Protocol):
    """The workspace's writer (`writer.py`): jobs queued, each answered once its commit is
    durable."""

    @property
    def holding(self) -> bool:
        """Whether it holds the store lock (for a batch or a push): main moves by its hand."""
        ...

    async def submit_async(
        self, run: Callable[[Unit], object], timeout: float, client: Hashable = None
    ) -> Job:
        """`run(batch)` in the next group commit; the job once that commit is durable."""
        ...

    async def submit_alone_async(self, run: Callable[[LiveWorkspace], object], timeout: float) -> Job:
        """`run(live)` alone, between two batches, under the store lock."""
        ...

    def unindexed(self, paths: list[str]) -> None:
        """Files written for `.git/index` to take in once no job waits."""
        ...

    def stop(self) -> None: ...


class Quiet:
    def batch_committed(self, workspace: str, events: int) -> None:
        pass

    def fold_lag(self, workspace: str, events: int) -> None:
        pass

    def outside_write(self, workspace: str, events: int, refused: str | None, commit: str) -> None:
        pass


class LiveWorkspace:
    def __init__(
        self, name: str, store: Store, observer: Observer, writer: Callable[[LiveWorkspace], Committer]
    ) -> None:
        """`writer`: makes the workspace's writer (`writer.Writer`), once its states are loaded."""
        self.name = name
        self.store = store
        self.observer = observer
        self.states: dict[str, tuple[State, list[Quarantine]]] = {}
        self.slices: dict[str, Kept] = {}
        self.head: str | None = None
        self.version = 0  # moves with every change of the states: keys rendered answers
        self.rendered: dict[tuple[object, ...], bytes] = {}
        self.rendering = threading.Lock()  # one answer rendered at a time (`routes.remembered`)
        self._marks: list[str] | None = None  # when the states' proposals lapse (`core/fold/lapse.py`)
        self._ref = os.path.join(store.root, ".git", "refs", "heads", "main")
        self._ref_seen: tuple[tuple[int, int, int] | None, str | None] = (None, None)
        self._lock = rwlock.RWLockWrite()  # a waiting writer goes before new readers
        self.loading = threading.Lock()  # one catch-up at a time (`outside.catch_up`)
        self._slicing = threading.Lock()
        self.load()
        self.feed = Feed.of(store)  # after the load: numbers every event the states fold
        self.writer = writer(self)

    # --- state ---------------------------------------------------------------------------

    def load(self) -> None:
        """Every log's state from the store (through its fold cache), as of its head now. A
        head moved by a push into the store first becomes the working files."""
        with self.store.locked():
            self.store.match_head()
            head = self.store.head()
            states = {log: self.store.state(log) for log in self.store.logs()}
        with self._lock.gen_wlock():
            self.states, self.slices, self.head = states, {}, head
            self._moved()

    def state(self, log: str) -> tuple[State, list[Quarantine]]:
        found = self.states.get(log)
        return found if found is not None else (State(), [])

    def sliced(self, log: str) -> Kept:
        """The slice of `log`'s state, made on first use (a view or the writer holds the
        states still meanwhile) and advanced with the state from then on."""
        found = self.slices.get(log)
        if found is None:
            with self._slicing:
                found = self.slices.get(log)
                if found is None:
                    found = Kept(self.state(log)[0], fill=log != WORKSPACE_LOG)
                    if log in self.states:
                        self.slices[log] = found
        return found

    def apply(self, log: str, events: list[Event]) -> None:
        """Fold events that passed every check into `log`'s state (the writer only)."""
        with self._lock.gen_wlock():
            self._fold(log, events)
            self._moved()

    def _fold(self, log: str, events: list[Event]) -> None:
        """`log`'s state and slice advanced by `events` (under the write lock)."""
        if log not in self.states:
            self.states[log] = (State(), [])
        state = self.states[log][0]
        kept = self.slices.get(log)
        if kept is None:
            cache.advance(state, events)
        else:
            kept.advance(events, lambda: cache.advance(state, events))

    def committed(self, commit: str, events: list[Event]) -> None:
        """A batch's commit is durable: its events go to the live stream."""
        self.head = commit
        self.feed.publish(events)
        self.observer.batch_committed(self.name, len(events))

    def moved_to(self, events: list[Event]) -> None:
        """main moved by a push or a fetch that brought `events` (the writer thread, under the
        store lock): the states fold the new head (through the fold cache, so an append costs
        what it brought) and the events go to the live stream."""
        self.load()
        self.feed.publish(events)

    def advanced(self, head: str, events: dict[str, list[Event]]) -> None:
        """main moved to `head` by a fetch that only appended `events` to their logs, each
        after its log's last id (the writer thread, under the store lock): folded on the
        states in memory, as a batch is, and sent to the live stream in id order."""
        with self._lock.gen_wlock():
            for log, batch in events.items():
                self._fold(log, batch)
            self.head = head
            self._moved()
        self.feed.publish(sorted((e for batch in events.values() for e in batch), key=lambda e: e.id))

    def follow(self, head: str, events: dict[str, list[Event]], reload: bool) -> None:
        """main moved to `head` by a push or a fetch that brought `events` (the writer thread,
        under the store lock): folded in memory when each log's new events come after its last
        id and nothing else changed (`reload` False), else through the fold cache."""
        if not reload and self.extends(events):
            self.advanced(head, events)
        else:
            self.moved_to(sorted((e for batch in events.values() for e in batch), key=lambda e: e.id))

    def extends(self, events: dict[str, list[Event]]) -> bool:
        """Whether each log's new events all come after its last id (the fold of the whole log
        is then the fold of the state with them on top)."""
        return all(
            order.not_after((e.id for e in batch), self.state(log)[0].last_id) is None
            for log, batch in events.items()
        )

    def _moved(self) -> None:
        self.version += 1
        self.rendered = {}
        self._marks = None

    def lapsed_by(self, now: str) -> int:
        """How many of the states' proposals have lapsed at `now`: what of a rendered answer
        the clock moves (a View held: the states stay still while they are read)."""
        marks = self._marks
        if marks is None:  # a proposal that can lapse is live, so hot: in its slice
            every = (e for log in list(self.states) for e in self.sliced(log).entities.values())
            marks = self._marks = lapse.marks(every)
        return bisect.bisect_right(marks, now)

    def known_lapsed_by(self, now: str) -> int | None:
        """`lapsed_by` when it costs no reading of the states, else None."""
        marks = self._marks
        return None if marks is None else bisect.bisect_right(marks, now)

    # --- reading -------------------------------------------------------------------------

    @contextmanager
    def held(self) -> Iterator[None]:
        """The states held still while a read uses them (`view.reading`)."""
        with self._lock.gen_rlock():
            yield

    def settled(self) -> bool:
        """Whether the states fold the store's head (nothing wrote under the service since),
        or the writer holds the store lock: main then moves by its hand, and it takes what
        wrote under the service first (`outside.take`), so a read need not wait for it."""
        return self.writer.holding or self._disk_head() == self.head

    def _disk_head(self) -> str | None:
        """main's commit as the ref file says; the store's answer otherwise. The file is
        replaced (a new inode) whenever main moves, so while its stat is the one seen last,
        so is its commit: one stat a request."""
        try:
            seen = os.stat(self._ref)
        except FileNotFoundError:
            return self.store.head()
        key = (seen.st_ino, seen.st_mtime_ns, seen.st_size)
        if key == self._ref_seen[0]:
            return self._ref_seen[1]
        try:
            text = Path(self._ref).read_bytes().strip().decode("ascii")
        except (FileNotFoundError, UnicodeDecodeError):
            return self.store.head()
        head = text if len(text) == 40 else self.store.head()
        self._ref_seen = (key, head)
        return head

    # --- closing ---------------------------------------------------------------------------

    def close(self) -> None:
        """Finish the writes in flight, end the stream, close the store."""
        self.writer.stop()
        self.feed.close()
        self.store.close()
