"""Entry point of `self`: global options, error mapping, exit codes.

Exit codes: 0 ok; 1 bad input (the message says what to do); 2 refused by a rule; 3 `self serve`
could not listen (`service/core/problems.py: NOT_STARTED`).
"""

from __future__ import annotations

import os
import sys
import warnings

import typer
from typer import _click as click  # typer 0.26-0.28 parse with their own copy of click

from cli import admin, agent, ledger, login, mcp, reads, serve, state, sync, team, verbs
from cli.common import OPTIONS
from cli.options import split_globals
from service import __version__


def _typer() -> typer.Typer:
    """The top-level app, as `app` and as the one-command app `only_for` builds."""
    return typer.Typer(
        cls=verbs.AliasAwareGroup,
        add_completion=False,
        no_args_is_help=True,
        help="selfhub: shared, typed, versioned state for teams of coding agents.",
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )


app = _typer()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"self {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
    workspace: str | None = typer.Option(
        None, "--workspace", help="The workspace store (else SELF_WORKSPACE)."
    ),
    project: str | None = typer.Option(
        None, "--project", help="The project (else SELF_PROJECT or the checkout marker)."
    ),
) -> None:
    if workspace:
        OPTIONS.workspace = workspace
    if project:
        OPTIONS.project = project


admin.register(app)
reads.register(app)
state.register(app)
verbs.register(app)
ledger.register(app)
sync.register(app)
team.register(app)
serve.register(app)
agent.register(app)
mcp.register(app)
login.register(app)


def only_for(args: list[str]) -> typer.Typer:
    """The app with just the built-in command or group `args` starts with, else the whole app:
    typer turns every registered command into a click command before it parses, tens of
    milliseconds a process, and one invocation runs one of them."""
    name = args[0] if args else None
    commands = [info for info in app.registered_commands if info.name == name]
    groups = [info for info in app.registered_groups if info.name == name]
    if name is None or not (commands or groups):
        return app  # options, help, an alias verb or a typo: the whole app answers
    one = _typer()
    one.registered_callback = app.registered_callback
    one.registered_commands, one.registered_groups = commands, groups
    return one


def _warn(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
    """A warning the store gives (something was set aside) is one line on stderr, no source."""
    typer.echo(f"self: warning: {message}", err=True)


def run(argv: list[str] | None = None) -> None:
    from cli.common import fail

    warnings.showwarning = _warn
    args = split_globals(list(sys.argv[1:] if argv is None else argv))
    command = typer.main.get_command(only_for(args))
    try:
        code = command.main(args=args, prog_name="self", standalone_mode=False)
        if isinstance(code, int) and code:  # an Exit(code) typer returned instead of raising
            sys.exit(code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(1)
    except click.exceptions.UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # a group run without a subcommand
            typer.echo(exc.format_message(), err=True)
            sys.exit(1)
        ctx = getattr(exc, "ctx", None)
        hint = f" (see `self {ctx.command_path.partition(' ')[2]} --help`)" if ctx else ""
        fail(f"{exc.format_message()}{hint}".replace("  ", " "), 1)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except Exception as exc:
        from cli.common import exit_for

        exit_for(exc)


if __name__ == "__main__":
    run()
