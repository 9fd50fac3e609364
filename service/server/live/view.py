"""A workspace as the application layer sees it, on the service's in-memory states.

`LiveStore` is the store port (`service/app/ports.py`) over a live workspace: the states and
slices it holds in memory, and, in the writer thread, the batch being committed as the
transaction every write runs in. So a command posted to the service runs through the same
`Workspace.write` and `service.app.execute` as the CLI's: only the port differs.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from service.adapters.store import Quarantine
from service.adapters.store.local import Local
from service.adapters.store.segments import Log
from service.app.workspace import Workspace
from service.core.commands.config import WorkspaceConfig
from service.core.events.events import Event, Origin
from service.core.fold.hotslice import ColdCounts, Filled, Kept
from service.core.fold.state import Entity, State
from service.server.live import outside

if TYPE_CHECKING:
    from service.adapters.store.unit import Unit as Batch
    from service.server.live.space import LiveWorkspace


@contextmanager
def reading(live: LiveWorkspace, project: str | None, origin: Origin) -> Iterator[View]:
    """A view of the live states for one read, held still while it is used; what wrote into
    the store under the service is taken first."""
    outside.catch_up(live)
    with live.held():
        yield View(live, project, origin)


class View(Workspace):
    """The application layer's workspace on a live workspace's states, held still while a
    read uses it, or on the writer's batch while a job runs."""

    store: LiveStore

    def __init__(
        self, live: LiveWorkspace, project: str | None, origin: Origin, batch: Batch | None = None
    ) -> None:
        super().__init__(LiveStore(live, batch), project, origin)

    @property
    def live(self) -> LiveWorkspace:
        return self.store.live


class LiveStore:
    """The store port on a live workspace: reads from its states in memory (the store on disk
    for what they do not keep: history, settings), writes into the writer's batch."""

    def __init__(self, live: LiveWorkspace, batch: Batch | None) -> None:
        self.live = live
        self.batch = batch

    @property
    def local(self) -> Local:
        return self.live.store.local

    def logs(self) -> list[str]:
        return self.live.store.logs()

    def read(self, log: str) -> Log:
        return self.live.store.read(log)

    def holding(self, log: str, text: str) -> list[Event]:
        return self.live.store.holding(log, text)

    def newest(self, log: str, n: int) -> list[Event]:
        return self.live.store.newest(log, n)

    def state(self, log: str) -> tuple[State, list[Quarantine]]:
        return self.live.state(log)

    def refold(self, log: str) -> tuple[State, list[Quarantine]]:
        return self.live.store.refold(log)

    def hot(self, log: str) -> Sliced:
        """The slice kept in memory beside the log's state (the CLI reads the slice cache on
        disk instead; context and status come out the same)."""
        return Sliced(self.live.sliced(log), self.live.state(log)[1])

    def config(self) -> WorkspaceConfig:
        return self.live.store.config()

    def save_config(self, config: WorkspaceConfig) -> None:
        self.live.store.save_config(config)

    @contextmanager
    def transaction(self, log: str) -> Iterator[BatchTransaction]:
        """A write of one log in the writer's batch: its events are checked and folded into
        the live state as it appends them, and committed with the batch."""
        yield BatchTransaction(self._writing(), log)

    @contextmanager
    def unit(self) -> Iterator[Batch]:
        """The writer's batch: every log, committed as one with the other jobs."""
        yield self._writing()

    def _writing(self) -> Batch:
        if self.batch is None:
            raise RuntimeError("a read view cannot write: submit the command to the workspace's writer")
        return self.batch


class BatchTransaction:
    """The transaction port on one log of the writer's batch."""

    def __init__(self, batch: Batch, log: str) -> None:
        self.batch = batch
        self.log = log

    @property
    def state(self) -> State:
        return self.batch.state(self.log)

    def view(self, names: Sequence[str] | None) -> State:
        return self.state  # the whole state is in memory: nothing to bring in

    @property
    def config(self) -> WorkspaceConfig:
        return self.batch.config

    def next_ids(self, n: int) -> list[str]:
        return [self.batch.new_id(self.state.last_id) for _ in range(n)]

    def now(self) -> str:
        return self.batch.now

    def append(self, events: list[Event]) -> None:
        self.batch.add(self.log, events)


@dataclass(frozen=True)
class Sliced:
    """A log's slice in memory, read as the application layer reads a hot slice."""

    kept: Kept
    quarantined: list[Quarantine]

    @property
    def state(self) -> State:
        return self.kept.state

    @property
    def cold(self) -> ColdCounts:
        return self.kept.cold

    @property
    def filler(self) -> Filled | None:
        return self.kept.filled if self.kept.fill else None

    def near(self, ids: Collection[str]) -> list[str]:
        return self.kept.near(ids)

    def holds(self, prefix: str) -> bool:
        return self.kept.holds(prefix)

    def fetch(self, wanted: Collection[str]) -> list[Entity]:
        return self.kept.fetch(wanted)
