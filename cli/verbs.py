"""Preset verbs from the alias table (goal, decide, convention, …), work and report."""

from __future__ import annotations

from typing import Any

import typer
from typer import _click as click  # typer 0.26-0.28 parse with their own copy of click
from typer.core import TyperGroup

from cli import records
from cli.common import OPTIONS, JsonOpt, echo, workspace
from service.app.settings import DEFAULT_ALIASES, AliasRow, alias_table, records_ledger
from service.core.errors import Invalid


class DefaultAddGroup(TyperGroup):
    """`self goal "text"` means `self goal add "text"`; `self goal -- TEXT` too, for a text
    that names a subcommand or starts with `-`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args[:1] == ["--"]:
            args = ["add", *args]
        return super().parse_args(ctx, args)

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
        return alias_table(workspace()).get(verb)
    except Exception:
        return None


def _row(verb: str) -> AliasRow:
    table = alias_table(workspace())
    if verb not in table:
        raise Invalid(f"{verb!r} is no longer in the alias table; `self alias` lists verbs")
    return table[verb]


def alias_app(verb: str, default: AliasRow) -> typer.Typer:
    sub = typer.Typer(
        cls=DefaultAddGroup,
        no_args_is_help=True,
        add_completion=False,
        help=(
            f"Records labelled {default.label!r} ({default.exposure}). `self {verb} TEXT` adds one; "
            f"a TEXT that names a subcommand or starts with '-' goes after `add --` "
            f"(`self {verb} add -- list`) or `--` (`self {verb} -- list`)."
        ),
    )

    if records_ledger(default.label):
        from cli import ledger

        ledger.add_command(sub, verb, default)
    else:
        plain_add(sub, verb)

    records.add_verbs(sub, ("retract", "confirm"))

    @sub.command("list")
    def list_(all_: bool = typer.Option(False, "--all"), as_json: bool = JsonOpt) -> None:
        """Live records with this label (every one with --all)."""
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
        supersedes: str | None = records.Supersedes,
        proposed: bool = records.Proposed,
        exposure: str | None = records.Exposure,
        priority: int | None = records.Priority,
        criterion: list[str] = records.Criterion,
        target: str | None = records.Target,
        demote: list[str] = records.Demote,
        at_workspace: bool = records.AtWorkspace,
        duplicate: bool = records.Duplicate,
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
        """Record a new one, placed by the alias row unless a flag says otherwise."""
        command = records.preset_command(
            verb,
            text,
            why=why,
            supersedes=supersedes,
            exposure=exposure,
            priority=priority,
            criterion=criterion,
            target=target,
            demote=demote,
            at_workspace=at_workspace,
            proposed=proposed,
            duplicate=duplicate,
            reads=tuple(reads),
            writes=tuple(writes),
            intends=tuple(intends),
        )
        records.run(command, as_json)


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
        from service.core.commands.requests import Report

        records.run(Report(record=work, text=text, commit=commit, artifact=artifact), as_json)


def work_app() -> typer.Typer:
    sub = alias_app("work", DEFAULT_ALIASES["work"])

    records.add_verbs(sub, ("start", "unblock", "block", "retire", "restore", "done"), work=True)

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
        """Record that the unit's process exited with a code."""
        from service.core.commands.requests import RunExited

        records.run(RunExited(record=record, code=code, unit=True), as_json)

    @sub.command("show")
    def show(record: str, as_json: bool = JsonOpt) -> None:
        """The full recovery line of one unit: outcome, status, reports, evidence."""
        from cli.reads import work_show

        work_show(record, as_json)

    return sub


__all__ = ["OPTIONS", "AliasAwareGroup", "echo", "register"]
