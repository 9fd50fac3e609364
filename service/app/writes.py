"""Run one command value: on fresh state under the store lock, on the log the model's rule
names (`requests.log_of`), appended through the append gate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from service.core.events.events import WORKSPACE_LOG

if TYPE_CHECKING:
    from collections.abc import Sequence

    from service.app.workspace import Command, Workspace
    from service.core.commands import requests
    from service.core.commands.commands import Clock
    from service.core.commands.config import WorkspaceConfig
    from service.core.events.events import Event
    from service.core.fold.state import State

Summary = dict[str, Any]


def execute(workspace: Workspace, command: requests.AnyCommand) -> list[Event]:
    """The events `command` appended, or the refusal it raised (nothing appended)."""
    from service.core.commands.handle import handle

    def run(state: State, config: WorkspaceConfig, clock: Clock) -> list[Event]:
        return handle(state, config, clock, command)

    return _on_its_log(workspace, command, run)


def execute_import(workspace: Workspace, command: requests.ImportDocket) -> tuple[list[Event], Summary]:
    """An import run as `execute` runs it (`handle`'s rule for it, on its log, in one
    transaction, through the append gate), with the summary of what it did."""
    from service.core.interop import exchange

    summary: Summary = {}

    def run(state: State, config: WorkspaceConfig, clock: Clock) -> list[Event]:
        events, done = exchange.import_lines(state, config, clock, command.lines)
        summary.update(done)
        return events

    return _on_its_log(workspace, command, run), summary


def _on_its_log(workspace: Workspace, command: requests.AnyCommand, run: Command) -> list[Event]:
    """`run` in a transaction on the log the model's rule names for `command`."""
    from service.core.commands import requests

    where = requests.log_of(command)
    names = requests.named(command)
    if isinstance(command, requests.OnRecord):
        events = workspace.write(workspace.log_of(command.record), run, names)
        if isinstance(command, requests.RunStarted) and command.pid is not None:
            _keep_pid(workspace, events[0], command.pid)
        return events
    log = WORKSPACE_LOG if where == "workspace" else workspace.require_project()
    if isinstance(command, requests.Add):
        return _new_record(workspace, log, run, names)
    return workspace.write(log, run, names)


def _keep_pid(workspace: Workspace, started: Event, pid: int) -> None:
    """The pid goes to this machine's ledger; the log only learns that a run started."""
    from service.core.events.events import RunStarted, payload_of

    payload = payload_of(started)
    assert isinstance(payload, RunStarted)
    workspace.store.local.record_pid(payload.work, pid, workspace.project or "")


def _new_record(workspace: Workspace, log: str, run: Command, names: Sequence[str] | None) -> list[Event]:
    """Write a new record to `log`. Ledger relations stay within one log, so one naming a
    record of another log is refused saying where that record is."""
    from service.core.errors import Invalid
    from service.core.gates.event_gate import display
    from service.core.ledger.ledger import Unresolved

    try:
        return workspace.write(log, run, names)
    except Unresolved as exc:
        other = next((o for o in workspace.store.logs() if o != log and workspace.holds(o, exc.prefix)), None)
        if other is None:
            raise
        here, there = (display(x) if x != WORKSPACE_LOG else "the workspace log" for x in (log, other))
        raise Invalid(
            f"{{{exc.field}}} {exc.prefix}: that record is in {there}, and a ledger relation names "
            f"records of its own log ({here}): record the ground in {here} too, or this record "
            f"in {there}",
            code="other-log",
            field=exc.fields,
            log="workspace" if other == WORKSPACE_LOG else "project",
        ) from exc
