"""What the add commands and the record verbs share, defined once.

Every preset verb (`self goal`, `self work`, `self claim`, …) and `self state` take the same
placement flags on add and the same lifecycle verbs on an existing record; this module holds
those flags, the command they build (`service.core.commands.requests`), and each lifecycle verb, so a
rule added to one verb reaches every group that offers it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import typer

from cli.common import JsonOpt, workspace
from cli.common import run as run  # the one write path; verbs elsewhere call it as records.run
from service.app.settings import EXPOSURES

if TYPE_CHECKING:  # imported where a command runs: a process builds only the command it runs
    from service.core.commands.requests import Add

Proposed = typer.Option(False, "--proposed", help="Record as a proposal waiting on a person.")
Exposure = typer.Option(None, "--exposure", help="|".join(EXPOSURES) + " (beats the alias row).")
Priority = typer.Option(None, "--priority", help="Render order, 0 is the top.")
Criterion = typer.Option([], "--criterion", help="An exit criterion (repeatable).")
Target = typer.Option(None, "--target", help="Deadline, YYYY-MM-DD.")
Demote = typer.Option([], "--demote", help="Move this record one tier down to make room.")
AtWorkspace = typer.Option(False, "--workspace", help="Record at workspace scope (every project).")
Supersedes = typer.Option(None, "--supersedes", help="Id of the live record this replaces.")
Why = typer.Option(None, "--why", help="Why.")
Duplicate = typer.Option(
    False, "--duplicate", help="Add it though a live record has the same label and text."
)


def preset_command(
    verb: str,
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
    proposed: bool,
    duplicate: bool = False,
    **extra: Any,
) -> Add:
    """The add command of a preset verb: the alias row's placement unless a flag beats it."""
    from service.core.commands.requests import Add

    return Add(
        text=text,
        preset=verb,
        exposure=exposure,
        priority=priority,
        scope="workspace" if at_workspace else "project",
        criteria=tuple(criterion),
        target=target,
        why=why,
        supersedes=supersedes,
        demote=tuple(demote),
        proposed=proposed,
        duplicate=duplicate,
        **extra,
    )


def _confirm(sub: typer.Typer, work: bool) -> None:
    @sub.command("confirm")
    def confirm(record: str, as_json: bool = JsonOpt) -> None:
        """Confirm a proposal (and the placements waiting with it)."""
        from service.core.commands import requests as rq

        run(rq.Confirm(record=record), as_json)


def _retract(sub: typer.Typer, work: bool) -> None:
    @sub.command("retract")
    def retract(
        record: str,
        why: str = typer.Option(..., "--why", help="Why it is withdrawn."),
        as_json: bool = JsonOpt,
    ) -> None:
        """Withdraw a record; terminal."""
        from service.core.commands import requests as rq

        run(rq.Retract(record=record, why=why), as_json)


def _start(sub: typer.Typer, work: bool) -> None:
    @sub.command("start")
    def start(record: str, as_json: bool = JsonOpt) -> None:
        """Mark in progress (with the linked checkout's head commit, when there is one)."""
        from service.core.commands import requests as rq

        run(rq.Start(record=record, unit=work, head=workspace().checkout_head()), as_json)


def _unblock(sub: typer.Typer, work: bool) -> None:
    @sub.command("unblock")
    def unblock(record: str, as_json: bool = JsonOpt) -> None:
        """Clear a block."""
        from service.core.commands import requests as rq

        run(rq.Unblock(record=record, unit=work), as_json)


def _block(sub: typer.Typer, work: bool) -> None:
    @sub.command("block")
    def block(
        record: str,
        on: str | None = typer.Option(None, "--on", help="What it waits on."),
        why: str | None = Why,
        as_json: bool = JsonOpt,
    ) -> None:
        """Mark blocked, naming what it waits on."""
        from service.core.commands import requests as rq

        run(rq.Block(record=record, unit=work, on=on, why=why), as_json)


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
        from service.core.commands import requests as rq

        head = workspace().checkout_head()
        command = rq.Done(
            record=record, unit=work, report=report, commit=commit, artifact=artifact, why=why, head=head
        )
        run(command, as_json)


def _retire(sub: typer.Typer, work: bool) -> None:
    @sub.command("retire")
    def retire(record: str, why: str | None = Why, as_json: bool = JsonOpt) -> None:
        """Close without doing it."""
        from service.core.commands import requests as rq

        run(rq.Retire(record=record, unit=work, why=why), as_json)


def _restore(sub: typer.Typer, work: bool) -> None:
    @sub.command("restore")
    def restore(record: str, why: str | None = Why, as_json: bool = JsonOpt) -> None:
        """Reopen done or retired work (retraction stays terminal)."""
        from service.core.commands import requests as rq

        run(rq.Restore(record=record, unit=work, why=why), as_json)


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
