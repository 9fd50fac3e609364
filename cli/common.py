"""What every command shares: the selected workspace, output, and error → exit code."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn

import msgspec
import typer

from service.model.controls import escape
from service.model.errors import Invalid, Refused

if TYPE_CHECKING:  # imported where called: `self --version` and `self context` stay light
    from service.workspace import Workspace


class Options:
    workspace: str | None = None
    project: str | None = None


OPTIONS = Options()


def workspace() -> Workspace:
    from service.workspace import Workspace

    return Workspace.locate(OPTIONS.workspace, OPTIONS.project)


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
    if isinstance(exc, Refused):
        message = str(exc)  # some rules word their refusal with the prefix already
        fail(message if message.startswith("refused:") else f"refused: {message}", 2)
    if isinstance(exc, Invalid):
        fail(str(exc), 1)
    from service.auth.errors import AuthError
    from service.data.errors import DataError
    from service.store.errors import StoreError

    if isinstance(exc, StoreError | DataError | AuthError):
        fail(str(exc), 1)
    if isinstance(exc, OSError) and exc.strerror:  # the filesystem said no: a path to fix, not a bug
        where = f"{exc.filename}: " if exc.filename else ""
        fail(f"{where}{exc.strerror}; check that the path exists and that you may write there", 1)
    raise exc


JsonOpt = typer.Option(False, "--json", help="Print one JSON document on stdout.")
