"""One dispatch for every command: a command value and a log's state in, the events to
append out, or a refusal (`Invalid` / `Refused`). Pure; the application layer runs it in a
store transaction on the log `requests.log_of` names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from service.core.commands import commands
from service.core.commands import requests as rq
from service.core.commands.commands import AddRequest, Clock
from service.core.commands.config import WorkspaceConfig
from service.core.errors import Invalid
from service.core.events.events import Event
from service.core.fold.state import State
from service.core.ledger import ledger
from service.core.ledger.worksets import work_fields

Handler = Callable[[State, WorkspaceConfig, Clock, Any], list[Event]]
LEDGER_FIELDS = tuple(ledger.LedgerInput.__struct_fields__)


def handle(state: State, config: WorkspaceConfig, clock: Clock, command: rq.AnyCommand) -> list[Event]:
    """The events `command` appends to the log `state` folds, or a refusal."""
    if getattr(command, "proposed", False):
        clock = msgspec.structs.replace(clock, origin=msgspec.structs.replace(clock.origin, confirmed=False))
    if isinstance(command, rq.UnitVerb) and command.unit:
        commands.work_unit(state, command.record, str(type(command).__struct_config__.tag))
    return HANDLERS[type(command)](state, config, clock, command)


def _add(state: State, config: WorkspaceConfig, clock: Clock, c: rq.Add) -> list[Event]:
    labels, exposure, priority = c.labels, c.exposure, c.priority
    if c.preset is not None:
        row = config.alias_table().get(c.preset)
        if row is None:
            raise Invalid(f"{c.preset!r} is no longer in the alias table", code="not-found", field="preset")
        labels = labels or (row.label,)
        exposure = exposure or row.exposure
        priority = priority if priority is not None else row.priority
    request = AddRequest(
        text=c.text,
        labels=labels,
        exposure=exposure or "search",
        priority=priority,
        scope=c.scope,
        criteria=c.criteria,
        target=c.target,
        why=c.why,
        supersedes=c.supersedes,
        demote=c.demote,
        duplicate=c.duplicate,
        ledger=work_fields(labels[0] if labels else "", c.reads, c.writes, c.intends),
    )
    given = ledger.LedgerInput(**{name: getattr(c, name) for name in LEDGER_FIELDS})
    return ledger.add(state, config, clock, request, given)


def _place(state: State, config: WorkspaceConfig, clock: Clock, c: rq.Place) -> list[Event]:
    return commands.place(
        state,
        config,
        clock,
        c.record,
        exposure=c.exposure,
        priority=c.priority,
        scope=c.scope,
        why=c.why,
        demote=c.demote,
    )


MAX_PID = 2**22  # the highest pid_max Linux allows; other systems stay below it


def _run_started(state: State, config: WorkspaceConfig, clock: Clock, c: rq.RunStarted) -> list[Event]:
    if c.pid is not None and not 0 < c.pid <= MAX_PID:
        raise Invalid(
            f"{{pid}} {c.pid}: give the process id of the unit's process (1 to {MAX_PID})", field="pid"
        )
    return commands.run_started(state, clock, c.record)


def _done(state: State, config: WorkspaceConfig, clock: Clock, c: rq.Done) -> list[Event]:
    return commands.done(
        state, clock, c.record, report=c.report, commit=c.commit, artifact=c.artifact, why=c.why, head=c.head
    )


def _import_docket(state: State, config: WorkspaceConfig, clock: Clock, c: rq.ImportDocket) -> list[Event]:
    from service.core.interop import exchange  # the Docket reader is loaded by an import only

    return exchange.import_lines(state, config, clock, c.lines)[0]


HANDLERS: dict[type, Handler] = {
    rq.Add: _add,
    rq.Place: _place,
    rq.Done: _done,
    rq.RunStarted: _run_started,
    rq.Confirm: lambda s, _, k, c: commands.confirm(s, k, c.record),
    rq.Decline: lambda s, _, k, c: commands.decline(s, k, c.record, c.why),
    rq.Retract: lambda s, _, k, c: commands.retract(s, k, c.record, c.why),
    rq.Start: lambda s, _, k, c: commands.start(s, k, c.record, c.head),
    rq.Block: lambda s, _, k, c: commands.block(s, k, c.record, c.on, c.why),
    rq.Unblock: lambda s, _, k, c: commands.unblock(s, k, c.record),
    rq.Retire: lambda s, _, k, c: commands.retire(s, k, c.record, c.why),
    rq.Restore: lambda s, _, k, c: commands.restore(s, k, c.record, c.why),
    rq.Cover: lambda s, _, k, c: commands.cover(s, k, c.record, c.criterion, c.why),
    rq.Link: lambda s, _, k, c: commands.link(s, k, c.record, c.link_type, c.target, c.remove),
    rq.Report: lambda s, _, k, c: commands.report(s, k, c.record, c.text, c.commit, c.artifact),
    rq.RunExited: lambda s, _, k, c: commands.run_exited(s, k, c.record, c.code),
    rq.Assess: lambda s, _, k, c: ledger.assess(s, k, c.record, c.state, c.why),
    rq.Revoke: lambda s, _, k, c: ledger.revoke(s, k, c.record, c.why),
    rq.Review: lambda s, _, k, c: ledger.review(s, k, c.record, c.why),
    rq.ProjectAdd: lambda s, _, k, c: commands.project_add(s, k, c.slug, c.description),
    rq.ProjectArchive: lambda s, _, k, c: commands.project_archive(s, k, c.slug, c.why),
    rq.ProjectRestore: lambda s, _, k, c: commands.project_restore(s, k, c.slug),
    rq.ImportDocket: _import_docket,
}
