"""Read commands: context, status, search, log, fold, work show/list, state show."""

from __future__ import annotations

import os
import shutil
import sys
from typing import TYPE_CHECKING

import typer

from cli import render
from cli.common import JsonOpt, echo, emit_json, run, workspace
from service.model import commands

if TYPE_CHECKING:
    from service.workspace import Workspace


def _agent_output(plain: bool) -> bool:
    if plain or not sys.stdout.isatty() or os.environ.get("TERM") == "dumb":
        return True
    return shutil.get_terminal_size((80, 24)).columns < 80


def register(app: typer.Typer) -> None:
    @app.command("context")
    def context_(
        plain: bool = typer.Option(False, "--plain", help="The agent render, within the budget."),
        budget: int | None = typer.Option(
            None, "--budget", help="Token budget of the agent render and --json, 100 to 1000000."
        ),
        as_json: bool = JsonOpt,
    ) -> None:
        """Bounded context for this project (outside a project: a workspace overview); the
        agent render and --json keep to the budget."""
        from service.model import context

        if budget is not None:
            context.check_budget(budget)
        ws = workspace()
        config = ws.config()
        given = budget if budget is not None else config.context_budget
        if not ws.project:
            return overview(ws, as_json, given, config.tokens_per_char)
        doc = ws.context()
        if as_json:
            return emit_json(context.fit(doc, given, config.tokens_per_char))
        if _agent_output(plain):
            echo(context.render_agent(doc, given, config.tokens_per_char))
        else:
            from cli import tty

            echo(tty.render_context(doc, shutil.get_terminal_size().columns))

    @app.command("status")
    def status_(as_json: bool = JsonOpt) -> None:
        """Derived live state and health of this project (or of every project)."""
        from service.model import status

        ws = workspace()
        if not ws.project:
            return overview(ws, as_json)
        doc = ws.status()
        if as_json:
            emit_json(doc)
        else:
            echo(status.render_status(doc))

    @app.command("search")
    def search_(
        query: str = typer.Argument("", help="Words to find (empty: every candidate)."),
        all_: bool = typer.Option(False, "--all", help="Include records context shows."),
        exposure: str | None = typer.Option(None, "--exposure", help="Only this exposure."),
        as_json: bool = JsonOpt,
    ) -> None:
        """Live records context does not render, across projects, this project first."""
        from service.model import views

        ws = workspace()
        hits = ws.search(query, all_, exposure)
        shorts = views.short_ids(e.id for e in hits)
        extras = ws.ledger_extras(hits)
        if as_json:
            emit_json([views.entity_row(e, shorts[e.id], extras.get(e.id)) for e in hits])
            return
        for e in hits:
            echo(f"{e.project or '(workspace)'}  {views.list_line(e, shorts[e.id], extras.get(e.id))}")
        echo(f"{len(hits)} match{'es' if len(hits) != 1 else ''}")

    @app.command("log")
    def log_(
        n: int = typer.Option(20, "-n", help="How many recent events."), as_json: bool = JsonOpt
    ) -> None:
        """Recent events of this project (of the workspace log outside a project), newest last."""
        from service.model.events import as_dict

        ws = workspace()
        events = ws.recent(n)
        if as_json:
            emit_json([as_dict(e) for e in events])
            return
        for e in events:
            echo(f"{e.id}  {e.ts}  {e.origin.actor:<5}  {e.type}  {render.subject(e)}")

    @app.command("fold")
    def fold_(as_json: bool = JsonOpt) -> None:
        """Refold every log from scratch and report counts and quarantined lines."""
        ws = workspace()
        report = ws.refold()
        if as_json:
            return emit_json(report)
        for row in report["logs"]:
            echo(
                f"{row['log'] or '(workspace)'}: {row['events']} events, {row['entities']} records, "
                f"{row['unknown']} unknown types, {len(row['quarantined'])} quarantined"
            )
            for q in row["quarantined"]:
                echo(f"  quarantined {q['file']}:{q['line']}: {q['reason']}")
            for detail in row["signals"]:
                echo(f"  health signal: {detail}")


def overview(ws: Workspace, as_json: bool, budget: int | None = None, per_char: float = 0.25) -> None:
    """The workspace overview; within `budget` tokens when given (context's, not status's)."""
    from service.model import context

    doc = ws.overview()
    if as_json:
        emit_json(doc)
    else:
        echo(context.render_overview(doc, budget, per_char))


def show_record(record: str, history: bool, at: str | None, as_json: bool) -> None:
    from service.model import views
    from service.model.events import as_dict

    ws = workspace()
    entity, events, extra = ws.show(record, history, at)
    row = views.entity_row(entity, entity.id, extra)
    if as_json:
        emit_json({**row, "history": [as_dict(e) for e in events]} if history else row)
        return
    echo(views.show_text(entity, extra=extra))
    for e in events:
        echo(f"  {e.id}  {e.ts}  {e.type}  {render.subject(e, full=True)}")


def work_show(record: str, as_json: bool) -> None:
    from service.model import views

    ws = workspace()
    doc = ws.work_show(record)
    if as_json:
        emit_json(doc)
    else:
        echo(views.work_show_text(doc))


def work_list(all_: bool, as_json: bool) -> None:
    from service.model import views

    ws = workspace()
    doc = ws.work_list(all_)
    if as_json:
        emit_json(doc["units"])  # a plain list of rows, as every list prints
    else:
        echo(views.work_list_text(doc))


def run_started(record: str, pid: int, as_json: bool) -> None:
    from service.model.requests import RunStarted

    run(RunStarted(record=record, pid=pid), as_json)


__all__ = ["commands", "register"]
