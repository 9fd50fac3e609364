"""A workspace as the application layer sees it, on the service's in-memory states: every
read and command the CLI has, folded once and advanced by appends. In the writer thread a
write gathers its events into the batch being committed instead of committing alone."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from service.model.commands import Clock
from service.model.events import Event, Origin
from service.model.hotslice import ColdCounts, Kept
from service.model.state import Entity, State
from service.store import Quarantine
from service.workspace import Command, Workspace

if TYPE_CHECKING:
    from service.live.space import LiveWorkspace
    from service.live.writer import Batch


class View(Workspace):
    def __init__(
        self, live: LiveWorkspace, project: str | None, origin: Origin, batch: Batch | None = None
    ) -> None:
        super().__init__(live.store, project, origin)
        self.live = live
        self.batch = batch

    def folded(self, log: str) -> tuple[State, list[Quarantine]]:
        return self.live.state(log)

    def hot(self, log: str) -> Sliced:
        """The slice kept in memory beside the log's state (the CLI reads the slice cache on
        disk instead; context and status come out the same)."""
        return Sliced(self.live.sliced(log), self.live.state(log)[1])

    def write(self, log: str, command: Command, names: Sequence[str] | None = None) -> list[Event]:
        """Run `command` on the live state of `log` (whole, in memory: `names` is not needed)
        and add its events to the writer's batch."""
        if self.batch is None:
            raise RuntimeError("a read view cannot write: submit the command to the workspace's writer")
        batch = self.batch
        state = self.state(log)
        clock = Clock(lambda: batch.new_id(state.last_id), batch.now, self.origin, log)
        events = command(state, self.config(), clock)
        batch.add(log, events)
        return events


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

    def near(self, ids: Collection[str]) -> list[str]:
        return self.kept.near(ids)

    def holds(self, prefix: str) -> bool:
        return self.kept.holds(prefix)

    def fetch(self, wanted: Collection[str]) -> list[Entity]:
        return self.kept.fetch(wanted)
