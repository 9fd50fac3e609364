"""`self serve --replicated`: a write to a remote-backed workspace is answered only once its
backend holds it. The workspace's writer (`server/live/writer.py`) holds the workspace's push
turn (`Replicated.turn`) around each group commit and its push, then calls `Replicated.push`,
on its thread and under the store lock: the sync protocol (the same as a round's, `round.py`)
puts the batch on the backend's main with compare-and-swap. Its answer is main as the backend
holds it, the commit each write's answer names (`Selfhub-Commit`); a push that failed after its
tries is the batch's `NotReplicated` (503).

Instances on one database take turns (`adapters/cluster/turns.py`): racing the compare-and-swap
instead, the instance whose fetch-rebase-push is quicker won again and again while the other
fetched, lost and paused, its writes queued behind it for seconds. A push after its turn's wait
fetches first (another instance most likely pushed meanwhile); a push without a turn (one
instance, or the database away) starts from the head last synced, with no fetch, and a
rejected push is tried again at once before the jittered pauses start.

Each push logs `replicated-push` (debug; info once it lost the compare-and-swap): its losses,
its turn and the wait for it, and where its time went: fetching, rebasing, pushing, pausing."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from dulwich.file import FileLocked
from dulwich.objects import ObjectID

from service.adapters.sync import Options, remotes
from service.adapters.sync.engine import Fetched
from service.adapters.sync.remembered import last_synced
from service.server.mirror.round import sync_live

if TYPE_CHECKING:
    from service.server.live.space import LiveWorkspace
    from service.server.mirror.mirrors import Mirrors

# Tried until it is in (without turns, instances racing to the backend retry at once, then
# after jittered pauses), within the write's 30 s (`api/writes.py`): a client waits for it.
PUSH_OPTIONS = Options(tries=40, timeout=5.0, deadline=20.0, pause=0.02, max_pause=0.4, at_once=1)


class Phases:
    """Where one push's time went, from the sync's hook points: fetching (from an attempt's
    start, or the last rejected push and its pause, to "fetched"), rebasing ("fetched" to
    "committed"), pushing ("committed" to "pushed")."""

    def __init__(self) -> None:
        self.mark = time.monotonic()
        self.spent = {"fetched": 0.0, "committed": 0.0, "pushed": 0.0}

    def __call__(self, point: str) -> None:
        now = time.monotonic()
        if point in self.spent:
            self.spent[point] += now - self.mark
        self.mark = now

    def seconds(self, paused: float) -> dict[str, float]:
        """The time spent in each, the pauses (`paused`) apart from the fetches."""
        fetch, rebase, push = self.spent["fetched"] - paused, self.spent["committed"], self.spent["pushed"]
        return {"fetch_s": round(fetch, 3), "rebase_s": round(rebase, 3), "push_s": round(push, 3)}


def known_head(live: LiveWorkspace) -> Fetched | None:
    """The backend's head as the last sync left it, for the push's first attempt to start
    from without a fetch: the batch was committed on it unless another instance pushed since,
    and then the compare-and-swap turns the push away and the next attempt fetches."""
    store = live.store
    head = last_synced(store, remotes.DEFAULT)
    if head is None:
        return None
    return Fetched(remotes.url_of(store.repo, remotes.DEFAULT), ObjectID(head.encode("ascii")))


class Turns(Protocol):
    """Whose turn it is to push a workspace, among the instances on one database
    (`adapters/cluster/turns.py`): the block holds it when it yields True."""

    def turn(self, workspace: str) -> contextlib.AbstractContextManager[bool]: ...


class Replicated:
    def __init__(self, mirrors: Mirrors, turns: Turns | None = None, options: Options = PUSH_OPTIONS) -> None:
        """`turns`: the instances' push turns (None: one instance, or no database)."""
        self.mirrors = mirrors
        self.turns = turns
        self.options = options
        self._turns: dict[str, tuple[bool, float]] = {}  # a workspace's turn now: held, its wait

    @contextlib.contextmanager
    def turn(self, live: LiveWorkspace) -> Iterator[bool]:
        """`live`'s push turn among the instances, held around a batch's commit and push (the
        writer's): True when held; False without `turns`, a backend, or a database."""
        if self.turns is None or self.mirrors.backend(live.name) is None:
            yield False
            return
        asked = time.monotonic()
        with self.turns.turn(live.name) as held:
            self._turns[live.name] = held, time.monotonic() - asked
            try:
                yield held
            finally:
                del self._turns[live.name]

    def push(self, live: LiveWorkspace) -> str | None:
        """main pushed to `live`'s backend: the backend's head once it holds it; None when
        `live` has no backend (a workspace this service hosts)."""
        if self.mirrors.backend(live.name) is None:
            return None
        held, waited = self._turns.get(live.name, (False, 0.0))
        phases = Phases()
        start = None if held else known_head(live)  # after a turn's wait, most likely another's push
        options = dataclasses.replace(self.options, hook=phases)
        try:
            summary = sync_live(live, options, start)
        except FileLocked:  # a round's prefetch was writing the same pack at once: it is in now
            summary = sync_live(live, options)
        self.mirrors.synced(live.name, "write", summary)  # the other instances fetch it
        (self.mirrors.log.info if summary.retries else self.mirrors.log.debug)(
            "replicated-push",
            workspace=live.name,
            lost=summary.retries,
            seconds=summary.seconds,
            paused_s=summary.paused,
            pulled=summary.pulled,
            pushed=summary.pushed,
            turn=held,
            turn_s=round(waited, 3),
            **phases.seconds(summary.paused),
        )
        return summary.head
