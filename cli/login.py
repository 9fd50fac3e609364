"""`self login URL`, `self whoami`, `self logout`: a team service's token kept once, with who it
is; `self config user NAME`: the name the CLI's writes carry when no login says."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from cli.common import JsonOpt, echo, fail, show

if TYPE_CHECKING:
    from service.app.login import Login


def register(app: typer.Typer) -> None:
    @app.command("login")
    def login_(
        url: str = typer.Argument(
            ..., help="The service: http(s)://HOST[:PORT] (or a workspace's URL on it)."
        ),
        given: str | None = typer.Argument(None, hidden=True, show_default=False),
        as_json: bool = JsonOpt,
    ) -> None:
        """Log in to a team service: the token is read from stdin (or a hidden prompt), never
        from the command line, checked with the service and kept in the credentials file."""
        from service.app import login

        if given is not None:  # refused without being echoed: a shell's history keeps it already
            fail(
                "a token is never taken from the command line (history and process lists keep it): "
                "pipe it on stdin",
                1,
            )
        found = login.login(url, _token())
        show(found, as_json, lambda f: f"logged in to {f.service} as {f.user} ({f.role} of {f.workspace})")

    @app.command("whoami")
    def whoami(
        url: str | None = typer.Argument(None, help="Only the login to this service."),
        as_json: bool = JsonOpt,
    ) -> None:
        """Who you are logged in as: user, workspace, role and service, one line each."""
        from service.app import login

        show(login.whoami(url), as_json, _lines)

    @app.command("logout")
    def logout(
        url: str | None = typer.Argument(None, help="The service (needed when logged in to several)."),
    ) -> None:
        """Forget a service's token and login."""
        from service.app import login

        gone = login.logout(url)
        echo(f"logged out of {gone.service} ({gone.user})")

    config = typer.Typer(
        no_args_is_help=True, add_completion=False, help="Your own settings on this machine."
    )
    app.add_typer(config, name="config")

    @config.command("user")
    def user(
        name: str | None = typer.Argument(None, help="The name your writes carry; none: print it."),
        unset: bool = typer.Option(False, "--unset", help="Forget the name."),
    ) -> None:
        """The name the CLI's writes carry (origin.by) when no login to the store's service says:
        kept beside the credentials file, for every store on this machine (else git's user.name)."""
        from service.app import login

        if unset:
            login.forget_user()
            echo("user name forgotten")
            return
        kept = login.configure_user(name)
        echo(kept if kept else "no user name is set: `self config user NAME` sets one")


def _token() -> str:
    """The token: stdin when it is not a terminal, else a prompt that does not echo it."""
    if not sys.stdin.isatty():
        return sys.stdin.readline()
    return str(typer.prompt("Token", hide_input=True, err=True))


def _lines(found: list[Login]) -> str:
    return "\n".join(f"{f.user}  {f.workspace}  {f.role}  {f.service}" for f in found)
