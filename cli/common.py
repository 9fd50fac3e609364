"""What every command shares: the selected workspace, output, and error → exit code."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn, TypeVar

import msgspec
import typer

from cli.options import OPTIONS as OPTIONS  # the global options, read before typer runs
from service.app.texts import escape
from service.core.errors import ModelError

if TYPE_CHECKING:  # imported where called: `self --version` and `self context` stay light
    from service.app import Workspace
    from service.core.commands.requests import AnyCommand


def workspace() -> Workspace:
    from service.app import locate

    return locate(OPTIONS.workspace, OPTIONS.project)


def run(command: AnyCommand, as_json: bool) -> None:
    """Execute one command (the application layer's one write call) and print what it wrote."""
    from service.app import execute, tools
    from service.app.queries import event_row

    ws = workspace()
    events = execute(ws, command)
    if as_json:
        emit_json({"events": [event_row(e) for e in events]})
    elif events:
        echo(tools.written(ws, events))


Doc = TypeVar("Doc")


def show(doc: Doc, as_json: bool, text: Callable[[Doc], str], styled: bool = False) -> None:
    """The one output of a read: `doc` as one JSON document, else its text render (if any);
    `styled`: the render escaped the text itself and styles it for the terminal."""
    if as_json:
        emit_json(doc)
    elif (shown := text(doc)) and styled:
        typer.echo(shown.rstrip("\n"))
    elif shown:
        echo(shown)


def emit_json(data: object) -> None:
    sys.stdout.buffer.write(msgspec.json.encode(data) + b"\n")
    sys.stdout.flush()


def echo(text: str) -> None:
    """Print a line (or lines); control characters show as \\uXXXX, never act on the terminal."""
    typer.echo(escape(text.rstrip("\n")))


def fail(message: str, code: int) -> NoReturn:
    typer.echo(f"self: {escape(message)}", err=True)
    raise SystemExit(code)


def exit_for(exc: BaseException) -> NoReturn:
    """One line on stderr and the exit code the code's row names (1 bad input, 2 refused)."""
    from service.core.problems import REFUSED, problem

    if isinstance(exc, ModelError):
        from cli.problems import message

        shown = message(exc)
        exit_code = problem(exc.code).exit
        if exit_code == REFUSED and not shown.startswith("refused:"):  # some rules word it so already
            shown = f"refused: {shown}"
        fail(shown, exit_code)
    from service.app.errors import adapter_code

    code = adapter_code(exc)
    if code is not None:
        from cli.problems import adapter_message

        fail(adapter_message(exc), problem(code).exit)
    if isinstance(exc, OSError) and exc.strerror:  # the filesystem said no: a path to fix, not a bug
        where = f"{exc.filename}: " if exc.filename else ""
        fail(f"{where}{exc.strerror}; check that the path exists and that you may write there", 1)
    raise exc


JsonOpt = typer.Option(False, "--json", help="Print one JSON document on stdout.")
