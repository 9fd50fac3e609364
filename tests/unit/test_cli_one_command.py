"""`self CMD` builds only CMD (cli/main.py: only_for) and behaves as the whole app does."""

from __future__ import annotations

import contextlib
import io

import pytest
import typer

from cli import main


def shown(app: typer.Typer, args: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        typer.main.get_command(app).main(args=args, prog_name="self", standalone_mode=False)
    return out.getvalue()


@pytest.mark.parametrize(
    "args",
    [
        ["sync", "--help"],
        ["clone", "--help"],
        ["state", "--help"],
        ["state", "add", "--help"],
        ["remote", "--help"],
        ["admin", "--help"],
        ["admin", "token", "create", "--help"],
    ],
    ids=" ".join,
)
def test_one_command_is_built_and_answers_as_the_whole_app(args: list[str]) -> None:
    one = main.only_for(args)
    assert one is not main.app
    names = [info.name for info in one.registered_commands + one.registered_groups]
    assert names == [args[0]]
    assert shown(one, args) == shown(main.app, args)


@pytest.mark.parametrize("args", [[], ["--help"], ["--version"], ["no-such-verb"]], ids=" ".join)
def test_anything_else_gets_the_whole_app(args: list[str]) -> None:
    assert main.only_for(args) is main.app
