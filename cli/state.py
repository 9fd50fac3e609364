"""`self state …`: the raw entity verbs."""

from __future__ import annotations

import typer

from cli import render
from cli.common import JsonOpt, echo, emit_json, workspace
from service.model import commands
from service.model.commands import AddRequest


def list_records(all_: bool, as_json: bool, label: str | None = None, at: str | None = None) -> None:
    from service.model import views

    ws = workspace()
    log = ws.require_project()
    state = ws.state_at(log, at) if at else ws.state(log)
    rows = views.list_rows(state, all_)
    if label is not None:
        rows = [e for e in rows if label in e.labels]
    shorts = views.short_ids(state.entities)
    extras = views.ledger_extras(state)
    if as_json:
        emit_json([views.entity_row(e, shorts[e.id], extras.get(e.id)) for e in rows])
        return
    for e in rows:
        echo(views.list_line(e, shorts[e.id], extras.get(e.id), shorts))
    noun = "record" if all_ else "live entity"
    plural = "records" if all_ else "live entities"
    echo(f"{len(rows)} {noun if len(rows) == 1 else plural}")


def register(app: typer.Typer) -> None:
    sub = typer.Typer(no_args_is_help=True, add_completion=False, help="Raw entity verbs.")
    app.add_typer(sub, name="state")

    @sub.command("add")
    def add(
        text: str,
        label: list[str] = typer.Option([], "--label", help="A label (repeatable)."),
        exposure: str = typer.Option("search", "--exposure", help="full|index|search."),
        priority: int | None = typer.Option(None, "--priority"),
        scope: str = typer.Option("project", "--scope", help="project|workspace|<slug>."),
        criterion: list[str] = typer.Option([], "--criterion"),
        target: str | None = typer.Option(None, "--target", help="YYYY-MM-DD."),
        why: str | None = typer.Option(None, "--why"),
        supersedes: str | None = typer.Option(None, "--supersedes"),
        proposed: bool = typer.Option(False, "--proposed"),
        demote: list[str] = typer.Option([], "--demote"),
        as_json: bool = JsonOpt,
    ) -> None:
        """Record an entity under any label."""
        from cli.common import OPTIONS
        from cli.verbs import add_record

        if scope not in ("project", "workspace"):
            OPTIONS.project = commands.valid_slug(scope)
            scope = "project"
        request = AddRequest(
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
        )
        render.written(add_record(request, proposed), as_json)

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
        why: str | None = typer.Option(None, "--why"),
        proposed: bool = typer.Option(False, "--proposed"),
        demote: list[str] = typer.Option([], "--demote"),
        as_json: bool = JsonOpt,
    ) -> None:
        """Move a record in context (moving up is capped; moving down records --why)."""
        ws = workspace()
        if proposed:
            ws = ws.proposed()
        render.written(
            ws.write_entity(
                record,
                lambda s, c, k: commands.place(
                    s, c, k, record, exposure=exposure, priority=priority, scope=scope, why=why, demote=demote
                ),
            ),
            as_json,
        )

    def simple(name: str, doc: str, fn):  # type: ignore[no-untyped-def]
        @sub.command(name, help=doc)
        def run(record: str, as_json: bool = JsonOpt) -> None:
            ws = workspace()
            render.written(ws.write_entity(record, lambda s, c, k: fn(s, k, record)), as_json)

    simple("confirm", "Confirm a proposal (and the placements waiting with it).", commands.confirm)
    simple("start", "Mark in progress.", commands.start)
    simple("unblock", "Clear a block.", commands.unblock)

    @sub.command("retract")
    def retract(record: str, why: str = typer.Option(..., "--why"), as_json: bool = JsonOpt) -> None:
        """Withdraw a record; terminal."""
        ws = workspace()
        render.written(ws.write_entity(record, lambda s, c, k: commands.retract(s, k, record, why)), as_json)

    @sub.command("cover")
    def cover(
        record: str, criterion: str, why: str | None = typer.Option(None, "--why"), as_json: bool = JsonOpt
    ) -> None:
        """Claim a declared criterion covered (by its number, text or a unique prefix)."""
        ws = workspace()
        render.written(
            ws.write_entity(record, lambda s, c, k: commands.cover(s, k, record, criterion, why)), as_json
        )

    @sub.command("done")
    def done(
        record: str,
        report: str | None = typer.Option(None, "--report"),
        commit: str | None = typer.Option(None, "--commit"),
        artifact: str | None = typer.Option(None, "--artifact"),
        as_json: bool = JsonOpt,
    ) -> None:
        """Mark done; refused without evidence or with uncovered criteria."""
        ws = workspace()
        render.written(
            ws.write_entity(
                record,
                lambda s, c, k: commands.done(s, k, record, report=report, commit=commit, artifact=artifact),
            ),
            as_json,
        )

    @sub.command("retire")
    def retire(record: str, why: str | None = typer.Option(None, "--why"), as_json: bool = JsonOpt) -> None:
        ws = workspace()
        render.written(ws.write_entity(record, lambda s, c, k: commands.retire(s, k, record, why)), as_json)

    @sub.command("restore")
    def restore(record: str, why: str | None = typer.Option(None, "--why"), as_json: bool = JsonOpt) -> None:
        """Reopen done or retired work (retraction stays terminal)."""
        ws = workspace()
        render.written(ws.write_entity(record, lambda s, c, k: commands.restore(s, k, record, why)), as_json)

    for name, remove in (("link", False), ("unlink", True)):

        def make(name: str = name, remove: bool = remove) -> None:
            @sub.command(name, help=("Remove" if remove else "Add") + " a typed link.")
            def run(
                record: str,
                target: str,
                link_type: str = typer.Option("relates", "--type", help="member-of|supersedes|relates."),
                as_json: bool = JsonOpt,
            ) -> None:
                ws = workspace()
                render.written(
                    ws.write_entity(
                        record, lambda s, c, k: commands.link(s, k, record, link_type, target, remove)
                    ),
                    as_json,
                )

        make()
