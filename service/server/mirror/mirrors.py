"""The service's remote-backed workspaces and when each syncs with its backend.

A sync is asked for by a webhook delivery, a write acknowledged through the API, a write into
the store from outside the service once it is taken (`server/live/outside.py`: a CLI on DATA's store,
a `git push` to its path; `Told` hears it from the hub, and the poll's tick notices main moved
under a workspace nothing reads and takes it), the poll (a backstop, every `poll_s` seconds
after the last sync) and the start; with several instances on one database
(`adapters/cluster/`), another instance's announcement of a commit. At most one sync of a
workspace is in flight: asked while one runs, exactly one more round follows it, however many
asked (a burst of deliveries or writes is one more fetch). A round fetches the remote's
objects in a worker thread first (`adapters/sync/prefetch.py`: the writes go on meanwhile, and a dead
backend fails there), ends when the remote is at the store's head and its last sync, and
otherwise syncs on the workspace's writer thread (`round.py`), never on the event loop,
starting from the head the prefetch brought (one fetch a round; the push's compare-and-swap
is against that head, and a remote that moved since is fetched again by the retry); a
workspace whose store is missing is cloned first (`establish.py`), in a worker thread. A
failed round (the backend down, the credentials refused) is logged and counted, and tried
again after 2, 4, 8… seconds (at most the poll period): the writes acknowledged meanwhile
are pushed once the backend is back.

Several instances (`Peers`): a round that pushed, and one of the poll that pulled, is announced
to the others, who run a round at once (a webhook's delivery is announced by the instance it
reached, `api/hooks.py`); the poll runs on the one instance that leads, and on every instance
while the database is unreachable. The start's rounds, retries and pushes run on every instance.

Everything here runs on the event loop but `prepare` (the loading thread, before the service
is ready) and the rounds' work (worker and writer threads).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import anyio.to_thread

from service.adapters.sync import Options, Summary, last_synced, remotes
from service.adapters.sync.prefetch import prefetch
from service.app.establish import establish
from service.server.live import outside
from service.server.live.errors import Stopping
from service.server.mirror.round import sync_live

if TYPE_CHECKING:
    from service.adapters.cluster import Announcement
    from service.adapters.data.backends import Backend
    from service.adapters.data.workspaces import Data
    from service.server.live.hub import Hub
    from service.server.live.space import Observer

TICK_S = 0.5  # how often the poll looks at what is due
RETRY_FIRST_S = 2.0  # the first pause after a failed sync; doubles up to the poll period
RETRY_MAX_S = 60.0  # when the poll is off
KEPT_PUSHES = 64  # heads this service pushed, per workspace: a delivery naming one needs no fetch
# The service's syncs wait less for a silent backend than `self sync` does: a writer thread
# that waits on the network holds the workspace's writes back.
OPTIONS = Options(tries=8, timeout=10.0, deadline=120.0)


class Counts(Protocol):
    """Where the syncs are counted (`service/server/api/metrics.py`)."""

    def backend_synced(self, workspace: str, trigger: str, ok: bool, seconds: float) -> None: ...


ANNOUNCED = "announced"  # the trigger of a round another instance's announcement asked for
FOUND_BY = ("poll", "start", "retry")  # triggers whose pulled commits the others may not know of


class Peers(Protocol):
    """The other instances on one database (`service/adapters/cluster`)."""

    def start(self, heard: Callable[[Announcement], None]) -> None: ...

    def announce(self, workspace: str, commit: str | None) -> None: ...

    def polls(self) -> bool: ...

    def stop(self) -> None: ...


class Told:
    """The hub's observer in a service with remote-backed workspaces: everything goes on to
    `counts` (the metrics), and a write from outside the service that passed the push gate
    asks for a round of its workspace, once `mirrors` is set (the app sets it right after
    making the hub). Told from any thread."""

    def __init__(self, counts: Observer) -> None:
        self.counts = counts
        self.mirrors: Mirrors | None = None

    def batch_committed(self, workspace: str, events: int) -> None:
        self.counts.batch_committed(workspace, events)

    def fold_lag(self, workspace: str, events: int) -> None:
        self.counts.fold_lag(workspace, events)

    def outside_write(self, workspace: str, events: int, refused: str | None, commit: str) -> None:
        self.counts.outside_write(workspace, events, refused, commit)
        if refused is None and self.mirrors is not None:
            self.mirrors.outside(workspace)


class Mirror:
    """One remote-backed workspace's sync schedule."""

    def __init__(self, name: str, backend: Backend) -> None:
        self.name = name
        self.backend = backend
        self.running = False
        self.again: str | None = None  # asked while running: the trigger of the round to follow
        self.due = 0.0  # monotonic time of the next poll (0: at start)
        self.failures = 0
        self.last_error: str | None = None
        self.pushed: deque[str] = deque(maxlen=KEPT_PUSHES)
        self.head: str | None = None  # main after the last round

    def settled(self, summary: Summary, now: float) -> None:
        self.failures, self.last_error = 0, None
        self.head = summary.head
        if summary.head is not None and (summary.pushed or summary.created or summary.merged):
            self.pushed.append(summary.head)
        poll = self.backend.poll_s
        self.due = now + poll if poll > 0 else math.inf

    def failed(self, error: str, now: float) -> None:
        self.failures += 1
        self.last_error = error
        cap = self.backend.poll_s if self.backend.poll_s > 0 else RETRY_MAX_S
        self.due = now + min(cap, RETRY_FIRST_S * 2 ** min(self.failures - 1, 10))


class Mirrors:
    def __init__(
        self,
        data: Data,
        hub: Hub,
        refresh: Callable[[str], object],
        log: Any,
        counts: Counts,
        options: Options = OPTIONS,
        peers: Peers | None = None,
    ) -> None:
        """`refresh(name)` brings the search index up to a workspace's head; `log` is the
        app's structlog logger; `peers`, the other instances (none: this one alone)."""
        self.data, self.hub, self.refresh, self.log, self.counts = data, hub, refresh, log, counts
        self.options, self.peers = options, peers
        self.mirrors: dict[str, Mirror] = {}
        self._lock = threading.Lock()  # `mirrors` is read by handlers, replaced by `reload`
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None  # the app's, once started
        self._ready: threading.Event | None = None  # the service's, once started
        self._taking: set[str] = set()  # workspaces whose outside write the tick is taking
        self.stopped = False
        self.reload()

    # --- which workspaces ------------------------------------------------------------------

    def reload(self) -> None:
        """Read DATA's backend records again (a workspace added while the service runs)."""
        backends = self.data.backends
        found: dict[str, Backend] = {}
        for name in backends.names():
            try:
                backend = backends.get(name)
            except Exception as exc:  # a damaged record: that workspace is not mirrored
                self.log.error("backend-record-unreadable", workspace=name, error=str(exc))
                continue
            if backend is not None:
                found[name] = backend
        with self._lock:
            for name, backend in found.items():
                held = self.mirrors.get(name)
                if held is None:
                    self.mirrors[name] = Mirror(name, backend)
                else:
                    held.backend = backend
            for name in set(self.mirrors) - set(found):
                del self.mirrors[name]

    def backend(self, name: str) -> Backend | None:
        """Workspace `name`'s backend; None when it is hosted here or does not exist."""
        with self._lock:
            held = self.mirrors.get(name)
        if held is None and self.data.backends.get(name) is not None:
            self.reload()  # added since the last look
            with self._lock:
                held = self.mirrors.get(name)
        return held.backend if held is not None else None

    def own(self, name: str) -> set[str]:
        """The commits of `name` this service pushed lately, and its head now: a delivery
        naming one of them brings nothing."""
        with self._lock:
            held = self.mirrors.get(name)
        found = set(held.pushed) if held is not None else set()
        live = self.hub.held(name)
        if live is not None and live.head is not None:
            found.add(live.head)
        return found

    # --- asking for a sync (on the event loop) ----------------------------------------------

    def ask(self, name: str, trigger: str) -> bool:
        """Sync workspace `name` soon; False when a sync is in flight (one more round follows
        it) or `name` has no backend."""
        with self._lock:
            mirror = self.mirrors.get(name)
        if mirror is None or self.stopped:
            return False
        if mirror.running:
            mirror.again = trigger
            return False
        mirror.running = True
        task = asyncio.get_running_loop().create_task(self._rounds(mirror, trigger))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    def wrote(self, name: str) -> None:
        """A write to `name` was acknowledged: push it (when `name` has a backend)."""
        if name in self.mirrors:
            self.ask(name, "write")

    def outside(self, name: str) -> None:
        """A write into `name`'s store from outside the service was taken (folded and served):
        push it (when `name` has a backend). From any thread: the reader's or the writer's
        that took it."""
        loop = self._loop
        if name not in self.mirrors or loop is None or self.stopped:
            return
        with contextlib.suppress(RuntimeError):  # the loop closed: the service is stopping
            loop.call_soon_threadsafe(self.ask, name, "outside")

    def announce(self, name: str, commit: str | None) -> None:
        """Tell the other instances `name` reached `commit` on its backend."""
        if self.peers is not None:
            self.peers.announce(name, commit)

    def synced(self, name: str, trigger: str, summary: Summary) -> None:
        """Announce what a sync of `name` asked by `trigger` put on the backend (a push) or
        found there first (a pull of the poll, the start, a retry). From any thread: a round's,
        or the writer's that pushed a batch (`replicated.py`)."""
        if summary.pushed or summary.created or summary.merged or (summary.pulled and trigger in FOUND_BY):
            self.announce(name, summary.head)

    def heard(self, announcement: Announcement) -> None:
        """Another instance announced a commit (from the listener's thread): a round of its
        workspace, or of every workspace when it names none, unless this one holds it."""
        loop = self._loop
        if loop is None or self.stopped:
            return
        with contextlib.suppress(RuntimeError):  # the loop closed: the service is stopping
            loop.call_soon_threadsafe(self._heard, announcement)

    def _heard(self, announcement: Announcement) -> None:
        if self._ready is None or not self._ready.is_set():
            return  # still loading: the start's round of each workspace follows
        with self._lock:
            names = [announcement.workspace] if announcement.workspace is not None else list(self.mirrors)
        for name in names:
            if announcement.commit is None or announcement.commit not in self.own(name):
                self.ask(name, ANNOUNCED)

    async def _rounds(self, mirror: Mirror, trigger: str) -> None:
        try:
            while True:
                mirror.again = None
                await self._round(mirror, trigger)
                if mirror.again is None or self.stopped:
                    return
                trigger = mirror.again
        finally:
            mirror.running = False

    async def _round(self, mirror: Mirror, trigger: str) -> None:
        name, started = mirror.name, time.monotonic()
        try:
            summary, moved = await self._sync(mirror)
            if moved:
                await anyio.to_thread.run_sync(self.refresh, name)
        except Stopping:
            return
        except Exception as exc:
            seconds = time.monotonic() - started
            mirror.failed(str(exc), time.monotonic())
            self.counts.backend_synced(name, trigger, False, seconds)
            self.log.error(
                "backend-sync-failed",
                workspace=name,
                trigger=trigger,
                code=str(getattr(exc, "code", type(exc).__name__)),
                error=str(exc),
                failures=mirror.failures,
                retry_in_s=round(mirror.due - time.monotonic(), 1),
                seconds=round(seconds, 3),
            )
            return
        seconds = time.monotonic() - started
        mirror.settled(summary, time.monotonic())
        self.counts.backend_synced(name, trigger, True, seconds)
        self.synced(name, trigger, summary)
        quiet = not (moved or summary.pushed or summary.pulled)  # a poll that found nothing new
        (self.log.debug if quiet else self.log.info)(
            "backend-sync",
            workspace=name,
            trigger=trigger,
            head=summary.head,
            pulled=summary.pulled,
            pushed=summary.pushed,
            retries=summary.retries,
            seconds=round(seconds, 3),
        )

    async def _sync(self, mirror: Mirror) -> tuple[Summary, bool]:
        """One round: a clone when the store is missing, else a sync on the writer thread;
        and whether main moved."""
        name, backend = mirror.name, mirror.backend
        if not self.data.has(name):
            summary = await anyio.to_thread.run_sync(establish, self.data, name, backend, self.options)
            return summary, True
        live = self.hub.held(name)
        if live is None:
            live = await anyio.to_thread.run_sync(self.hub.workspace, name)
        store = live.store
        fetched = await anyio.to_thread.run_sync(prefetch, store.root, remotes.DEFAULT, self.options)
        remote = fetched.head.decode("ascii") if fetched.head is not None else None
        if remote is not None and remote == store.head() == last_synced(store, remotes.DEFAULT):
            return Summary(remotes.DEFAULT, "", head=remote), False  # in step: the writer is not asked
        before = live.head
        run = partial(sync_live, options=self.options, fetched=fetched)  # no second fetch
        job = await live.writer.submit_alone_async(run, self.options.deadline + 30)
        done = job.answer()
        assert isinstance(done, Summary)
        return done, live.head != before

    # --- the poll ---------------------------------------------------------------------------

    async def poll(self, ready: threading.Event) -> None:
        """Until `stop`: once the service is ready, every workspace at start, then each one
        whose poll or retry is due."""
        while not ready.is_set() and not self.stopped:
            await asyncio.sleep(0.05)
        ticks = 0
        while not self.stopped:
            if ticks and ticks % 10 == 0:
                await anyio.to_thread.run_sync(self.reload)
            now = time.monotonic()
            with self._lock:
                due = [m for m in self.mirrors.values() if m.due <= now and not m.running]
                names = list(self.mirrors)
            polls = self.peers is None or self.peers.polls()
            for mirror in due:
                trigger = "start" if mirror.due == 0 else "retry" if mirror.failures else "poll"
                if trigger != "poll" or polls:
                    self.ask(mirror.name, trigger)
            self._notice(names)
            ticks += 1
            await asyncio.sleep(TICK_S)

    def _notice(self, names: list[str]) -> None:
        """Take the outside write of each workspace of `names` whose main moved under the
        service (one stat of the ref each) in a worker thread, as a read would: the push gate
        judges it, and once taken it asks for a round (`outside`). A CLI writing into DATA's
        store is pushed within a tick, whether or not anything reads the workspace."""
        for name in names:
            live = self.hub.held(name)
            if live is None or name in self._taking or live.settled():
                continue
            self._taking.add(name)
            task = asyncio.get_running_loop().create_task(self._take(name, partial(outside.catch_up, live)))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _take(self, name: str, catch_up: Callable[[], None]) -> None:
        try:
            await anyio.to_thread.run_sync(catch_up)
        except Exception as exc:  # a read meets the same failure and answers it
            self.log.error("outside-write-unread", workspace=name, error=str(exc))
        finally:
            self._taking.discard(name)

    def start(self, ready: threading.Event) -> None:
        """Start the poll on the running loop (the app's startup)."""
        self._loop, self._ready = asyncio.get_running_loop(), ready
        if self.peers is not None:
            self.peers.start(self.heard)
        task = self._loop.create_task(self.poll(ready))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def stop(self) -> None:
        self.stopped = True
        for task in list(self._tasks):
            task.cancel()
        if self.peers is not None:
            self.peers.stop()

    # --- the start (the loading thread) -------------------------------------------------------

    def prepare(self) -> None:
        """Clone every remote-backed workspace whose store is missing, before the hub opens
        DATA's workspaces; a failure is logged (the poll tries again)."""
        with self._lock:
            missing = [m for m in self.mirrors.values() if not self.data.has(m.name)]
        for mirror in missing:
            started = time.monotonic()
            try:
                summary = establish(self.data, mirror.name, mirror.backend, self.options)
            except Exception as exc:
                mirror.failed(str(exc), time.monotonic())
                self.counts.backend_synced(mirror.name, "start", False, time.monotonic() - started)
                self.log.error(
                    "backend-clone-failed",
                    workspace=mirror.name,
                    code=str(getattr(exc, "code", type(exc).__name__)),
                    error=str(exc),
                )
                continue
            self.counts.backend_synced(mirror.name, "start", True, time.monotonic() - started)
            self.log.info("backend-cloned", workspace=mirror.name, head=summary.head, pulled=summary.pulled)
