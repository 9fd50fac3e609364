"""One writer per workspace: requests queue their jobs; the writer thread takes every job
waiting, runs each on the live state (each sees the ones before it), and commits them all
as one fsynced commit (group commit). A job is answered only once that commit is durable;
one refused job refuses only itself.

Before a commit the writer waits, up to `GATHER_S` (25 ms), for the connections of its last
commit that post in a loop (back within `LOOP_S` of their answer: `Returning`) — while the
event loop is still sending their answers, then as long as their posts keep coming, `IDLE_S`
without one meaning they are not on their way (`gather`) — so clients in a loop share commits
instead of alternating in two halves; a lone client, or one opening a new connection for each
post, never makes a commit wait. `.git/index` is written once no job came for `INDEX_AFTER_S`
(half a second), so a run of lone posts pays for it once.

With `--replicated` (`replicate`) a batch is answered once pushed to the backend. Before its
commit the writer waits for the workspace's push turn (`Replicate.turn`: instances pushing one
backend take turns instead of racing its compare-and-swap), and every write that queued
meanwhile joins the batch (`_joining`): one commit and one push carry them all, so the wait
for a turn is shared by every write it delayed.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Protocol

from service.adapters.store.unit import Unit
from service.server.live import outside
from service.server.live.errors import CommitFailed, NotReplicated, Stopping, WriteTimeout
from service.server.live.jobs import Job

if TYPE_CHECKING:
    from service.server.live.space import LiveWorkspace

MAX_JOBS = 512  # jobs in one batch: bounds one commit's size and its readers' wait
GATHER_S = 0.025  # the longest a commit waits for the clients likely to post again at once
IDLE_S = 0.002  # ... but no longer than this without a job coming, once their answers went out
LOOP_S = 0.05  # a client whose next post came this soon after its answer posts in a loop
INDEX_AFTER_S = 0.5  # `.git/index` is written once no job came for this long


def new_batch(live: LiveWorkspace) -> Unit:
    """The unit of work of one commit, on the live states: each job sees the ones before it."""
    return Unit(live.store, lambda log: live.state(log)[0], live.apply, live.feed.get)


class Returning:
    """The clients (connections) likely to post again at once: those of the last commit whose
    post came within LOOP_S of their previous answer, as a client posting in a loop does. The
    writer waits for them, up to GATHER_S, before it commits: without the wait, clients in a
    loop split into groups whose commits alternate, each about half of them. A client that
    posts once, now and then, or on a new connection each time never makes a commit wait."""

    def __init__(self) -> None:
        self._answered: dict[Hashable, float] = {}  # client: when its last commit was answered
        self._theirs: list[Job] = []  # the last commit's jobs of the clients posting in a loop

    @property
    def expected(self) -> set[Hashable]:
        """The clients the next commit waits for."""
        return {job.client for job in self._theirs}

    def committed(self, jobs: list[Job], now: float) -> None:
        """The commit answered `now` held `jobs` (a job with no client is no one's)."""
        answered = self._answered
        named = [job for job in jobs if job.client is not None]
        self._theirs = [j for j in named if j.client in answered and j.queued - answered[j.client] < LOOP_S]
        answered.update(dict.fromkeys((job.client for job in named), now))
        if len(answered) > 4 * MAX_JOBS:
            self._answered = {c: t for c, t in answered.items() if now - t < LOOP_S}

    def sent(self) -> float | None:
        """When the last of the expected clients' answers went out; None while one has not:
        a client cannot post again before it has its answer, which the event loop may still
        be sending to the others of that commit."""
        if any(job.answered == 0.0 for job in self._theirs):
            return None
        return max((job.answered for job in self._theirs), default=0.0)


class Replicate(Protocol):
    """`--replicated` (`server/mirror/replicated.py`)."""

    def turn(self, live: LiveWorkspace) -> AbstractContextManager[object]:
        """Held around a batch's commit and push: the workspace's turn at pushing (waits for
        the other instances' pushes before it)."""
        ...

    def push(self, live: LiveWorkspace) -> str | None:
        """Push the workspace's main to its backend (the sync protocol, on the writer thread
        under the store lock) and give the backend's head; None when the workspace has no
        backend. Raises when the push failed."""
        ...


class Writer:
    def __init__(self, live: LiveWorkspace, replicate: Replicate | None = None) -> None:
        """`replicate`: a batch is answered only once it returned (`--replicated`)."""
        self.live = live
        self.replicate = replicate
        self._queue: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._stopping = False
        self.holding = False  # the store lock, for a batch or an alone job: main moves by this thread
        self._unindexed: set[str] = set()  # files committed since .git/index was written
        self._returning = Returning()
        self._later: list[Job | None] = []  # taken from the queue while joining a batch: next
        self._thread = threading.Thread(target=self._loop, name=f"writer-{live.name}", daemon=True)
        self._thread.start()

    async def submit_async(
        self, run: Callable[[Unit], object], timeout: float, client: Hashable = None
    ) -> Job:
        """Queue a job and wait, on the event loop and without holding a thread, until its
        commit is durable (or it was refused)."""
        return await self._submit(Job(run, _unset, client=client), timeout)

    async def submit_alone_async(self, run: Callable[[LiveWorkspace], object], timeout: float) -> Job:
        """Queue `run(live)`, run by the writer thread between two batches under the store
        lock with the states folding the store's head, and wait until it returned."""
        return await self._submit(Job(run, _unset, alone=True), timeout)

    async def _submit(self, job: Job, timeout: float) -> Job:
        if self._stopping:
            raise Stopping()
        loop = asyncio.get_running_loop()
        settled: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            loop.call_soon_threadsafe(_settle, settled)

        job.on_done = wake
        job.queued = time.monotonic()
        self._queue.put(job)
        try:
            await asyncio.wait_for(asyncio.shield(settled), timeout)
        except TimeoutError:
            raise WriteTimeout(timeout) from None
        finally:
            job.answered = time.monotonic()
        return job

    def unindexed(self, paths: list[str]) -> None:
        """Files a job wrote for `.git/index` to take in once no job waits (the writer's
        thread only)."""
        self._unindexed.update(paths)

    def stop(self) -> None:
        """Take no new jobs, finish those queued, end the thread."""
        self._stopping = True
        self._queue.put(None)
        self._thread.join()

    def _loop(self) -> None:
        while True:
            if self._later:
                jobs, ending = self._taken()
            else:
                try:
                    first = self._queue.get(timeout=INDEX_AFTER_S if self._unindexed else None)
                except queue.Empty:
                    self._index()
                    continue
                jobs, ending = gather(self._queue, first, self._returning)
            for group in _groups(jobs):
                if group[0].alone:
                    self._alone(group[0])
                else:
                    self._batch(group)
            if ending:
                if self._unindexed:
                    self._index()
                return

    def _taken(self) -> tuple[list[Job], bool]:
        """The jobs `_joining` took from the queue and left for the next round, in order."""
        taken, self._later = self._later, []
        jobs = [job for job in taken if job is not None]
        return jobs, len(jobs) < len(taken)

    def _batch(self, jobs: list[Job]) -> None:
        """Commit `jobs` (and with `replicate`, push them) and answer them."""
        if self.replicate is None:
            self._commit(jobs)
        else:
            with self.replicate.turn(self.live):  # never raises: without a turn, a push races
                jobs += self._joining(MAX_JOBS - len(jobs))
                self._commit(jobs)
        self._returning.committed(jobs, time.monotonic())

    def _joining(self, room: int) -> list[Job]:
        """The batch jobs queued since the batch was gathered (up to `room`), to join it; an
        `alone` job, and any after it, waits in `_later` for the next round, in order."""
        joined: list[Job] = []
        while len(joined) < room and not self._later:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            if job is None or job.alone:
                self._later.append(job)
            else:
                joined.append(job)
        return joined

    def _commit(self, jobs: list[Job]) -> None:
        live = self.live
        try:
            with live.store.locked(), self._holding():
                outside.take(live)  # written by another process since: judged and folded first
                batch = new_batch(live)
                for job in jobs:
                    _run(job, batch)
                if batch.events:
                    try:
                        commit, files = live.store.write_lines(
                            batch.lines, [e.id for e in batch.events], index=False
                        )
                        self._unindexed.update(files)
                    except BaseException as exc:
                        live.load()  # the folded events were not written: drop them
                        raise CommitFailed(exc) from exc
                    live.committed(commit, batch.events)
                head = self._replicated(jobs)
                for job in jobs:
                    if job.error is None:
                        job.commit = head
        except BaseException as exc:  # every job of the batch learns why; the thread goes on
            for job in jobs:
                if job.error is None and (job.events or not isinstance(exc, CommitFailed)):
                    job.error = exc
        finally:
            for job in jobs:
                job.on_done()

    def _replicated(self, jobs: list[Job]) -> str | None:
        """The commit that holds the batch's writes: main here, or with `replicate`, main as
        the backend holds it once pushed (the sync may have put the batch on the backend's
        head: another commit). A failed push is NotReplicated for every job it would answer,
        a replay that wrote nothing included: its events may be the ones not pushed yet."""
        if self.replicate is None or all(job.error is not None for job in jobs):
            return self.live.head
        try:
            pushed = self.replicate.push(self.live)
        except Exception as exc:
            raise NotReplicated(exc) from exc
        return pushed or self.live.head

    def _alone(self, job: Job) -> None:
        live = self.live
        try:
            with live.store.locked(), self._holding():
                outside.take(live)
                job.result = job.run(live)
        except BaseException as exc:  # the job's answer; the thread goes on
            job.error = exc
        finally:
            job.on_done()

    @contextmanager
    def _holding(self) -> Iterator[None]:
        self.holding = True
        try:
            yield
        finally:
            self.holding = False

    def _index(self) -> None:
        """`.git/index` after the commits since it was last written: once no job came for
        INDEX_AFTER_S (and when the writer stops), so a run of writes, even one at a time,
        pays for it once."""
        self.live.store.update_index(sorted(self._unindexed))
        self._unindexed.clear()


def gather(
    waiting: queue.SimpleQueue[Job | None], first: Job | None, returning: Returning
) -> tuple[list[Job], bool]:
    """The jobs for the next commits, `first` and every one `waiting`; and, for up to
    GATHER_S, those of the clients likely to post again at once (`returning`), as long as
    they may be on their way: until their answers went out, then while jobs keep coming (none
    for IDLE_S: they are not). True with them once the writer is to stop (a None job)."""
    jobs = [first] if first is not None else []
    ending = first is None
    heard = time.monotonic()
    deadline = heard + GATHER_S
    expected = returning.expected - {job.client for job in jobs}
    while len(jobs) < MAX_JOBS and not ending:
        wait = _wait(returning, heard, deadline) if expected else 0.0
        try:
            more = waiting.get(timeout=wait) if wait > 0 else waiting.get_nowait()
        except queue.Empty:
            if wait > 0 and returning.sent() is None and time.monotonic() < deadline:
                continue  # an answer of theirs is still going out
            break
        if more is None:
            ending = True
        else:
            jobs.append(more)
            expected.discard(more.client)
            heard = time.monotonic()
    return jobs, ending


def _wait(returning: Returning, heard: float, deadline: float) -> float:
    """How long to wait for the next job: IDLE_S after the last job came or the last answer
    of the expected clients went out, whichever is later; in steps of IDLE_S while one of
    those answers has not; never past `deadline`."""
    now = time.monotonic()
    sent = returning.sent()
    if sent is None:
        return min(deadline - now, IDLE_S)
    return min(deadline, max(heard, sent) + IDLE_S) - now


def _unset() -> None:
    raise AssertionError("a job is answered only once it was queued")


def _groups(jobs: list[Job]) -> list[list[Job]]:
    """`jobs` in order, cut into runs of batch jobs and single `alone` jobs."""
    groups: list[list[Job]] = []
    for job in jobs:
        if job.alone or not groups or groups[-1][0].alone:
            groups.append([job])
        else:
            groups[-1].append(job)
    return groups


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _run(job: Job, batch: Unit) -> None:
    mark = len(batch.events)
    try:
        job.result = job.run(batch)
    except Exception as exc:  # the job's refusal (or fault) is its answer, not the batch's
        job.error = exc
    job.events = batch.events[mark:]
