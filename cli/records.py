"""What the add commands and the record verbs share, defined once.

Every preset verb (`self goal`, `self work`, `self claim`, …) and `self state` take the same
placement flags on add and the same lifecycle verbs on an existing record; this module holds
those flags, the request they build, and each lifecycle verb, so a rule added to one verb
reaches every group that offers it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import typer

from cli import render
from cli.common import JsonOpt, workspace
from service.model import commands
from service.model.commands import AddRequest
from service.model.config import AliasRow
from service.model.events import Event

Command = Callable[[Any, Any, Any], list[Event]]

Proposed = typer.Option(False, "--proposed", help="Record as a proposal waiting on a person.")
Exposure = typer.Option(None, "--exposure", help="full|index|search (beats the alias row).")
Priority = typer.Option(None, "--priority", help="Render order, 0 is the top.")
Criterion = typer.Option([], "--criterion", help="An exit criterion (repeatable).")
Target = typer.Option(None, "--target", help="Deadline, YYYY-MM-DD.")
Demote = typer.Option([], "--demote", help="Move this record one tier down to make room.")
AtWorkspace = typer.Option(False, "--workspace", help="Record at workspace scope (every project).")
Supersedes = typer.Option(None, "--supersedes", help="Id of the live record this replaces.")
Why = typer.Option(None, "--why", help="Why.")


def preset_request(
    row: AliasRow,
    text: str,
    *,
    why: str | None,
    supersedes: str | None,
    exposure: str | None,
    priority: int | None,
    criterion: list[str],
    target: str | None,
    demote: list[str],
    at_workspace: bool,
    **extra: Any,
) -> AddRequest:
    """The add request of a preset verb: the alias row's placement unless a flag beats it."""
    return AddRequest(
        text=text,
        labels=(row.label,),
        exposure=exposure or row.exposure,
        priority=priority if priority is not None else row.priority,
        scope="workspace" if at_workspace else "project",
        criteria=tuple(criterion),
        target=target,
        why=why,
        supersedes=supersedes,
        demote=tuple(demote),
        **extra,
    )


def write_on(record: str, command: Command, as_json: bool, work_verb: str | None = None) -> None:
    """Run one command against the log that holds `record` and print what it wrote;
    `work_verb` names a `self work` verb, refused on a record that is not a work unit."""
    if work_verb is not None:
        command = _on_work(record, work_verb, command)
    render.written(workspace().write_entity(record, command), as_json)


def _on_work(record: str, verb: str, command: Command) -> Command:
    def checked(s: Any, c: Any, k: Any) -> list[Event]:
        commands.work_unit(s, record, verb)
        return command(s, c, k)

    return checked


def _confirm(sub: typer.Typer, work: bool) -> None:
    @sub.command("confirm")
    def confirm(record: str, as_json: bool = JsonOpt) -> None:
        """Confirm a proposal (and the placements waiting with it)."""
        write_on(record, lambda s, c, k: commands.confirm(s, k, record), as_json)


def _retract(sub: typer.Typer, work: bool) -> None:
    @sub.command("retract")
    def retract(
        record: str,
        why: str = typer.Option(..., "--why", help="Why it is withdrawn."),
        as_json: bool = JsonOpt,
    ) -> None:
        """Withdraw a record; terminal."""
        write_on(record, lambda s, c, k: commands.retract(s, k, record, why), as_json)


def _start(sub: typer.Typer, work: bool) -> None:
    @sub.command("start")
    def start(record: str, as_json: bool = JsonOpt) -> None:
        """Mark in progress (with the linked checkout's head commit, when there is one)."""
        head = workspace().checkout_head()
        write_on(record, lambda s, c, k: commands.start(s, k, record, head), as_json, _verb(work, "start"))


def _unblock(sub: typer.Typer, work: bool) -> None:
    @sub.command("unblock")
    def unblock(record: str, as_json: bool = JsonOpt) -> None:
        """Clear a block."""
        write_on(record, lambda s, c, k: commands.unblock(s, k, record), as_json, _verb(work, "unblock"))


def _block(sub: typer.Typer, work: bool) -> None:
    @sub.command("block")
    def block(
        record: str,
        on: str | None = typer.Option(None, "--on", help="What it waits on."),
        why: str | None = Why,
        as_json: bool = JsonOpt,
    ) -> None:
        """Mark blocked, naming what it waits on."""
        write_on(record, lambda s, c, k: commands.block(s, k, record, on, why), as_json, _verb(work, "block"))


def _done(sub: typer.Typer, work: bool) -> None:
    @sub.command("done")
    def done(
        record: str,
        report: str | None = typer.Option(
            None, "--report", help="A done-time report: what verifiably happened."
        ),
        commit: str | None = typer.Option(None, "--commit", help="The commit sha that carries the work."),
        artifact: str | None = typer.Option(None, "--artifact", help="A produced artifact."),
        why: str | None = Why,
        as_json: bool = JsonOpt,
    ) -> None:
        """Mark done; refused without evidence or with uncovered criteria."""
        head = workspace().checkout_head()

        def command(s: Any, c: Any, k: Any) -> list[Event]:
            return commands.done(
                s, k, record, report=report, commit=commit, artifact=artifact, why=why, head=head
            )

        write_on(record, command, as_json, _verb(work, "done"))


def _retire(sub: typer.Typer, work: bool) -> None:
    @sub.command("retire")
    def retire(record: str, why: str | None = Why, as_json: bool = JsonOpt) -> None:
        """Close without doing it."""
        write_on(record, lambda s, c, k: commands.retire(s, k, record, why), as_json, _verb(work, "retire"))


def _restore(sub: typer.Typer, work: bool) -> None:
    @sub.command("restore")
    def restore(record: str, why: str | None = Why, as_json: bool = JsonOpt) -> None:
        """Reopen done or retired work (retraction stays terminal)."""
        write_on(record, lambda s, c, k: commands.restore(s, k, record, why), as_json, _verb(work, "restore"))


def _verb(work: bool, name: str) -> str | None:
    return name if work else None


VERBS: dict[str, Callable[[typer.Typer, bool], None]] = {
    "confirm": _confirm,
    "retract": _retract,
    "start": _start,
    "unblock": _unblock,
    "block": _block,
    "done": _done,
    "retire": _retire,
    "restore": _restore,
}


def add_verbs(sub: typer.Typer, names: Iterable[str], work: bool = False) -> None:
    """Register the named lifecycle verbs on a command group (`work`: the `self work` group,
    whose verbs act on work units only)."""
    for name in names:
        VERBS[name](sub, work)
