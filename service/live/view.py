"""A workspace as the application layer sees it, on the service's in-memory states: every
read and command the CLI has, folded once and advanced by appends. In the writer thread a
write gathers its events into the batch being committed instead of committing alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from service.model.commands import Clock
from service.model.events import Event, Origin
from service.model.hotslice import stays_hot
from service.model.state import Project, State, shared_with
from service.store import Quarantine
from service.workspace import WORKSPACE_LOG, Command, Workspace

if TYPE_CHECKING:
    from service.live.space import LiveWorkspace
    from service.live.writer import Batch
    from service.model.context import ContextDoc
    from service.model.status import StatusDoc


class View(Workspace):
    def __init__(
        self, live: LiveWorkspace, project: str | None, origin: Origin, batch: Batch | None = None
    ) -> None:
        super().__init__(live.store, project, origin)
        self.live = live
        self.batch = batch

    def folded(self, log: str) -> tuple[State, list[Quarantine]]:
        return self.live.state(log)

    def projects_known(self) -> dict[str, Project]:
        return self.state(WORKSPACE_LOG).projects

    def holds(self, log: str, prefix: str) -> bool:
        """Whether `log` has a record an id prefix (or an imported alias) names: from its live state."""
        state = self.state(log)
        return any(k.startswith(prefix.lower()) for k in state.entities) or any(
            e.ledger is not None and e.ledger.alias == prefix for e in state.entities.values()
        )

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

    def status(self) -> StatusDoc:
        """The status of the project from its whole state in memory (the CLI reads the hot
        slice from disk instead; both give the same document)."""
        from service.model import status
        from service.workspace import today

        project = self.require_project()
        state, quarantined = self.folded(project)
        located = [(q.file, q.line, q.reason) for q in quarantined]
        return status.build_status(project, state, self.runs(), located, today(), self.now())

    def context(self) -> ContextDoc:
        """The context of the project from the whole states in memory (the CLI reads hot
        slices from disk instead; both give the same document)."""
        project = self.require_project()
        mine, quarantined = self.folded(project)
        shared = [e for e in self.state(WORKSPACE_LOG).entities.values() if e.live]
        for other, (state, _) in sorted(self.live.states.items()):
            if other not in (WORKSPACE_LOG, project):
                # what the hot slice of another log holds, as the CLI reads it
                shared += [
                    e for e in state.entities.values() if shared_with(project, e) and stays_hot(state, e)
                ]
        return self.context_of(project, mine, shared, len(quarantined))
