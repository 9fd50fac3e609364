"""Read commands: context, status, search, log, fold, work show/list, state show."""

from __future__ import annotations

import os
import shutil
import sys
from typing import TYPE_CHECKING

import typer

from cli.common import JsonOpt, run, show, workspace
from service.app import texts

if TYPE_CHECKING:
    from service.app import queries


def _agent_output(plain: bool) -> bool:
    if plain or not sys.stdout.isatty() or os.environ.get("TERM") == "dumb":
        return True
    return shutil.get_terminal_size((80, 24)).columns < 80


def _context_text(read: queries.Context, styled: bool) -> str:
    """The agent render, or the terminal's (`styled`: escaped, then styled by rich)."""
    if not styled:
        return texts.context(read, agent=True)
    from cli import tty

    return tty.render_markdown(texts.context(read, agent=False), shutil.get_terminal_size().columns)


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
        from service.app import queries

        read = queries.context(workspace(), queries.budget(budget))
        styled = not (_agent_output(plain) or not read.of_project())
        show(read.fitted(), as_json, lambda _: _context_text(read, styled), styled)

    @app.command("status")
    def status_(as_json: bool = JsonOpt) -> None:
        """Derived live state and health of this project (or of every project)."""
        from service.app import queries

        show(queries.status(workspace()), as_json, texts.status)

    @app.command("search")
    def search_(
        query: str = typer.Argument("", help="Words to find (empty: every candidate)."),
        all_: bool = typer.Option(False, "--all", help="Include records context shows."),
        exposure: str | None = typer.Option(None, "--exposure", help="Only this exposure."),
        as_json: bool = JsonOpt,
    ) -> None:
        """Live records context does not render, across projects: this project first, then by bm25."""
        from service.app import queries

        hits = queries.search(workspace(), query, all_, exposure)
        show(hits.rows, as_json, lambda _: texts.matches(hits.lines, hits.hidden))

    @app.command("log")
    def log_(
        n: int = typer.Option(20, "-n", help="How many recent events."), as_json: bool = JsonOpt
    ) -> None:
        """Recent events of this project (of the workspace log outside a project), newest last."""
        from service.app import queries

        show(queries.recent(workspace(), n), as_json, texts.events)

    @app.command("fold")
    def fold_(as_json: bool = JsonOpt) -> None:
        """Refold every log from scratch and report counts and quarantined lines."""
        from service.app import queries

        show(queries.refold(workspace()), as_json, texts.fold)


def show_record(record: str, history: bool, at: str | None, as_json: bool) -> None:
    from service.app import queries

    read = queries.record(workspace(), record, history, at)
    show(read.document(), as_json, lambda _: read.text)


def work_show(record: str, as_json: bool) -> None:
    from service.app import queries

    show(queries.work_show(workspace(), record), as_json, texts.work_show)


def work_list(all_: bool, as_json: bool) -> None:
    from service.app import queries

    doc = queries.work_list(workspace(), all_)
    show(doc.units, as_json, lambda _: texts.work_list(doc))  # a plain list of rows, as every list prints


def run_started(record: str, pid: int, as_json: bool) -> None:
    from service.core.commands.requests import RunStarted

    run(RunStarted(record=record, pid=pid), as_json)
