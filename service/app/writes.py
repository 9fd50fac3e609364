"""Run one command value: on fresh state under the store lock, on the log the model's rule
names (`requests.log_of`), appended through the append gate."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.model import requests
    from service.model.commands import Clock
    from service.model.config import WorkspaceConfig
    from service.model.events import Event
    from service.model.state import State
    from service.workspace import Workspace

WORKSPACE_LOG = ""


def execute(workspace: Workspace, command: requests.AnyCommand) -> list[Event]:
    """The events `command` appended, or the refusal it raised (nothing appended)."""
    from service.model import requests
    from service.model.handle import handle

    def run(state: State, config: WorkspaceConfig, clock: Clock) -> list[Event]:
        return handle(state, config, clock, command)

    where = requests.log_of(command)
    if isinstance(command, requests.OnRecord):
        return workspace.write(workspace.log_of(command.record), run)
    if isinstance(command, requests.Add):  # relations naming another log's records: said where
        return workspace.write_record(WORKSPACE_LOG if where == "workspace" else None, run)
    return workspace.write(WORKSPACE_LOG if where == "workspace" else workspace.require_project(), run)
