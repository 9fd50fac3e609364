"""`self state …`: the raw entity verbs."""

from __future__ import annotations

import typer

from cli import records
from cli.common import JsonOpt, show, workspace
from service.app import texts, valid_slug
from service.app.settings import EXPOSURES


def list_records(all_: bool, as_json: bool, label: str | None = None, at: str | None = None) -> None:
    from service.app import queries

    read = queries.records(workspace(), all_, label, at)
    show(read.rows, as_json, lambda _: texts.records(read, all_))


def register(app: typer.Typer) -> None:
    sub = typer.Typer(no_args_is_help=True, add_completion=False, help="Raw entity verbs.")
    app.add_typer(sub, name="state")

    @sub.command("add")
    def add(
        text: str,
        label: list[str] = typer.Option([], "--label", help="A label (repeatable)."),
        exposure: str = typer.Option("search", "--exposure", help="|".join(EXPOSURES) + "."),
        priority: int | None = records.Priority,
        scope: str = typer.Option("project", "--scope", help="project|workspace|<slug>."),
        criterion: list[str] = records.Criterion,
        target: str | None = records.Target,
        why: str | None = records.Why,
        supersedes: str | None = records.Supersedes,
        proposed: bool = records.Proposed,
        demote: list[str] = records.Demote,
        duplicate: bool = records.Duplicate,
        as_json: bool = JsonOpt,
    ) -> None:
        """Record an entity under any label."""
        from cli.common import OPTIONS

        if scope not in ("project", "workspace"):
            OPTIONS.project = valid_slug(scope)
            scope = "project"
        from service.core.commands import requests as rq

        command = rq.Add(
            text=text,
            labels=tuple(label),
            exposure=exposure,
            priority=priority,
            scope=scope,
            criteria=tuple(criterion),
            target=target,
            why=why,
            supersedes=supersedes,
            demote=tuple(demote),
            proposed=proposed,
            duplicate=duplicate,
        )
        records.run(command, as_json)

    @sub.command("list")
    def list_(
        all_: bool = typer.Option(False, "--all", help="Every record, not only live ones."),
        at: str | None = typer.Option(None, "--at", help="Fold history up to an event id or ISO date."),
        label: str | None = typer.Option(None, "--label"),
        as_json: bool = JsonOpt,
    ) -> None:
        """Live records with placement (every record with --all)."""
        list_records(all_, as_json, label, at)

    @sub.command("show")
    def show(
        record: str,
        history: bool = typer.Option(False, "--history", help="Its own events, oldest first."),
        at: str | None = typer.Option(None, "--at"),
        as_json: bool = JsonOpt,
    ) -> None:
        """One record; --history lists its events."""
        from cli.reads import show_record

        show_record(record, history, at, as_json)

    @sub.command("place")
    def place(
        record: str,
        exposure: str | None = typer.Option(None, "--exposure"),
        priority: int | None = typer.Option(None, "--priority"),
        scope: str | None = typer.Option(None, "--scope", help="project|workspace."),
        why: str | None = records.Why,
        proposed: bool = records.Proposed,
        demote: list[str] = records.Demote,
        as_json: bool = JsonOpt,
    ) -> None:
        """Move a record in context (moving up is capped; moving down records --why)."""
        from service.core.commands import requests as rq

        command = rq.Place(
            record=record,
            exposure=exposure,
            priority=priority,
            scope=scope,
            why=why,
            demote=tuple(demote),
            proposed=proposed,
        )
        records.run(command, as_json)

    records.add_verbs(sub, ("confirm",))

    @sub.command("decline")
    def decline(
        record: str,
        why: str | None = typer.Option(None, "--why", help='Why (default "declined").'),
        as_json: bool = JsonOpt,
    ) -> None:
        """Decline a proposal: a proposed record is withdrawn, a placement waiting is dropped."""
        from service.core.commands import requests as rq

        records.run(rq.Decline(record=record, why=why), as_json)

    records.add_verbs(sub, ("start", "unblock", "retract"))

    @sub.command("cover")
    def cover(
        record: str, criterion: str, why: str | None = typer.Option(None, "--why"), as_json: bool = JsonOpt
    ) -> None:
        """Claim a declared criterion covered (by its number, text or a unique prefix)."""
        from service.core.commands import requests as rq

        records.run(rq.Cover(record=record, criterion=criterion, why=why), as_json)

    records.add_verbs(sub, ("done", "retire", "restore"))

    for name, remove in (("link", False), ("unlink", True)):

        def make(name: str = name, remove: bool = remove) -> None:
            @sub.command(name, help=("Remove" if remove else "Add") + " a typed link.")
            def run(
                record: str,
                target: str,
                link_type: str = typer.Option("relates", "--type", help="member-of|supersedes|relates."),
                as_json: bool = JsonOpt,
            ) -> None:
                from service.core.commands import requests as rq

                command = rq.Link(record=record, target=target, link_type=link_type, remove=remove)
                records.run(command, as_json)

        make()
