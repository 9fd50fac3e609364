"""Preset verbs from the alias table (goal, decide, convention, …), work and report."""

from __future__ import annotations

from typing import Any

import typer
from typer import _click as click  # typer 0.26-0.28 parse with their own copy of click
from typer.core import TyperGroup

from cli import render
from cli.common import OPTIONS, JsonOpt, echo, workspace
from service.model import commands
from service.model.commands import AddRequest
from service.model.config import DEFAULT_ALIASES, AliasRow
from service.model.ledger import LedgerInput


class DefaultAddGroup(TyperGroup):
    """`self goal "text"` means `self goal add "text"`."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["add", *args]
        return super().resolve_command(ctx, args)


class AliasAwareGroup(TyperGroup):
    """Verbs added with `self alias add` become commands without a restart of anything."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None:
            return found
        row = _user_alias(cmd_name)
        return None if row is None else typer.main.get_command(alias_app(cmd_name, row))


def _user_alias(verb: str) -> AliasRow | None:
    try:
        return workspace().config().alias_table().get(verb)
    except Exception:
        return None


def _row(verb: str) -> AliasRow:
    table = workspace().config().alias_table()
    if verb not in table:
        raise commands.Invalid(f"{verb!r} is no longer in the alias table; `self alias` lists verbs")
    return table[verb]


def alias_app(verb: str, default: AliasRow) -> typer.Typer:
    sub = typer.Typer(
        cls=DefaultAddGroup,
        no_args_is_help=True,
        add_completion=False,
        help=f"Records labelled {default.label!r} ({default.exposure}).",
    )

    from service.model.state import kind_of

    if kind_of((default.label,)) is not None:
        from cli import ledger

        ledger.add_command(sub, verb, default)
    else:
        plain_add(sub, verb)

    @sub.command("retract")
    def retract(
        record: str,
        why: str = typer.Option(..., "--why", help="Why it is withdrawn."),
        as_json: bool = JsonOpt,
    ) -> None:
        ws = workspace()
        render.written(ws.write_entity(record, lambda s, c, k: commands.retract(s, k, record, why)), as_json)

    @sub.command("confirm")
    def confirm(record: str, as_json: bool = JsonOpt) -> None:
        ws = workspace()
        render.written(ws.write_entity(record, lambda s, c, k: commands.confirm(s, k, record)), as_json)

    @sub.command("list")
    def list_(all_: bool = typer.Option(False, "--all"), as_json: bool = JsonOpt) -> None:
        from cli.state import list_records

        if verb == "work":
            from cli.reads import work_list

            work_list(all_, as_json)
        else:
            list_records(all_, as_json, label=_row(verb).label)

    return sub


def plain_add(sub: typer.Typer, verb: str) -> None:
    @sub.command("add")
    def add(
        text: str,
        why: str | None = typer.Option(None, "--why", help="The rationale."),
        supersedes: str | None = typer.Option(
            None, "--supersedes", help="Id of the live record this replaces."
        ),
        proposed: bool = typer.Option(False, "--proposed", help="Record as a proposal waiting on a person."),
        exposure: str | None = typer.Option(
            None, "--exposure", help="full|index|search (beats the alias row)."
        ),
        priority: int | None = typer.Option(None, "--priority", help="Render order, 0 is the top."),
        criterion: list[str] = typer.Option([], "--criterion", help="An exit criterion (repeatable)."),
        target: str | None = typer.Option(None, "--target", help="Deadline, YYYY-MM-DD."),
        demote: list[str] = typer.Option([], "--demote", help="Move this record one tier down to make room."),
        scope_workspace: bool = typer.Option(
            False, "--workspace", help="Record at workspace scope (every project)."
        ),
        reads: list[str] = typer.Option(
            [], "--reads", help="A path or glob the unit reads (repeatable).", hidden=verb != "work"
        ),
        writes: list[str] = typer.Option(
            [], "--writes", help="A path or glob the unit writes (repeatable).", hidden=verb != "work"
        ),
        intends: list[str] = typer.Option(
            [], "--intends", help="An intended outcome: a path or glob it will change.", hidden=verb != "work"
        ),
        as_json: bool = JsonOpt,
    ) -> None:
        from service.model.worksets import work_fields

        row = _row(verb)
        request = AddRequest(
            text=text,
            labels=(row.label,),
            exposure=exposure or row.exposure,
            priority=priority if priority is not None else row.priority,
            scope="workspace" if scope_workspace else "project",
            criteria=tuple(criterion),
            target=target,
            why=why,
            supersedes=supersedes,
            demote=tuple(demote),
            ledger=work_fields(row.label, reads, writes, intends),
        )
        render.written(add_record(request, proposed), as_json)


def add_record(request: AddRequest, proposed: bool, given: LedgerInput | None = None) -> list[commands.Event]:
    """One call for every add: the scope picks the log, `--proposed` the origin; claims,
    decisions and questions go through the ledger's rules."""
    from service.model import ledger

    fields = given or LedgerInput()
    ws = workspace()
    if proposed:
        ws = ws.proposed()
    log = "" if request.scope == "workspace" and not request.supersedes and not request.demote else None
    command = lambda s, c, k: ledger.add(s, c, k, request, fields)  # noqa: E731
    return ws.write_record(log, command)


def register(app: typer.Typer) -> None:
    for verb, row in DEFAULT_ALIASES.items():
        if verb != "work":
            app.add_typer(alias_app(verb, row), name=verb)
    app.add_typer(work_app(), name="work")

    @app.command("report")
    def report(
        work: str,
        text: str,
        commit: str | None = typer.Option(None, "--commit", help="The commit sha that carries the work."),
        artifact: str | None = typer.Option(
            None, "--artifact", help="A produced artifact (repo-relative path or URL)."
        ),
        as_json: bool = JsonOpt,
    ) -> None:
        """Add a report to a work unit (evidence when it names a commit or artifact)."""
        ws = workspace()
        render.written(
            ws.write_entity(work, lambda s, c, k: commands.report(s, k, work, text, commit, artifact)),
            as_json,
        )


def work_app() -> typer.Typer:
    sub = alias_app("work", DEFAULT_ALIASES["work"])

    def execution(name: str, fn: Any, doc: str) -> None:
        @sub.command(name, help=doc)
        def run(record: str, as_json: bool = JsonOpt) -> None:
            ws = workspace()
            render.written(ws.write_entity(record, lambda s, c, k: fn(s, k, record)), as_json)

    @sub.command("start")
    def start(record: str, as_json: bool = JsonOpt) -> None:
        """Mark a work unit in progress (with the linked checkout's head commit, when there is one)."""
        ws = workspace()
        head = ws.checkout_head()
        render.written(ws.write_entity(record, lambda s, c, k: commands.start(s, k, record, head)), as_json)

    execution("unblock", commands.unblock, "Clear a block.")

    @sub.command("block")
    def block(
        record: str,
        on: str | None = typer.Option(None, "--on", help="What it waits on."),
        why: str | None = typer.Option(None, "--why"),
        as_json: bool = JsonOpt,
    ) -> None:
        ws = workspace()
        render.written(
            ws.write_entity(record, lambda s, c, k: commands.block(s, k, record, on, why)), as_json
        )

    @sub.command("retire")
    def retire(record: str, why: str | None = typer.Option(None, "--why"), as_json: bool = JsonOpt) -> None:
        ws = workspace()
        render.written(ws.write_entity(record, lambda s, c, k: commands.retire(s, k, record, why)), as_json)

    @sub.command("restore")
    def restore(record: str, why: str | None = typer.Option(None, "--why"), as_json: bool = JsonOpt) -> None:
        ws = workspace()
        render.written(ws.write_entity(record, lambda s, c, k: commands.restore(s, k, record, why)), as_json)

    @sub.command("done")
    def done(
        record: str,
        report: str | None = typer.Option(
            None, "--report", help="A done-time report: what verifiably happened."
        ),
        commit: str | None = typer.Option(None, "--commit"),
        artifact: str | None = typer.Option(None, "--artifact"),
        why: str | None = typer.Option(None, "--why"),
        as_json: bool = JsonOpt,
    ) -> None:
        """Mark done; refused without evidence or with uncovered criteria."""
        ws = workspace()
        head = ws.checkout_head()
        render.written(
            ws.write_entity(
                record,
                lambda s, c, k: commands.done(
                    s, k, record, report=report, commit=commit, artifact=artifact, why=why, head=head
                ),
            ),
            as_json,
        )

    @sub.command("started")
    def started(
        record: str,
        pid: int = typer.Option(..., "--pid", help="The process id (kept on this machine only)."),
        as_json: bool = JsonOpt,
    ) -> None:
        """Record that a process runs this unit: the pid stays local, the log gets work.run-started."""
        from cli.reads import run_started

        run_started(record, pid, as_json)

    @sub.command("exited")
    def exited(
        record: str, code: int = typer.Option(..., "--code", help="The exit code."), as_json: bool = JsonOpt
    ) -> None:
        ws = workspace()
        render.written(
            ws.write_entity(record, lambda s, c, k: commands.run_exited(s, k, record, code)), as_json
        )

    @sub.command("show")
    def show(record: str, as_json: bool = JsonOpt) -> None:
        """The full recovery line of one unit: outcome, status, reports, evidence."""
        from cli.reads import work_show

        work_show(record, as_json)

    return sub


__all__ = ["OPTIONS", "AliasAwareGroup", "echo", "register"]
