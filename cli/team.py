"""`self admin`: the team service's data directory — workspaces, users, API tokens.

These work on DATA directly, also while a service runs on it (SQLite in WAL mode); users and
tokens in the PostgreSQL database `--identity` names when the services use one. Kept apart from
cli/admin.py, which administers one workspace store.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from cli.common import JsonOpt, echo, show
from service.app import team

if TYPE_CHECKING:
    from service.app.team import TokenRow

DataOpt = typer.Option(..., "--data", envvar="SELF_DATA", help="The service's data directory.")
DataOrIdentityOpt = typer.Option(
    None,
    "--data",
    envvar="SELF_DATA",
    help="The service's data directory (with --identity: only to check a token's workspace exists).",
)
IdentityOpt = typer.Option(
    None,
    "--identity",
    envvar="SELF_IDENTITY",
    help="A postgresql:// URL: users, tokens and web sessions live there (default: DATA/auth.sqlite).",
)


def register(app: typer.Typer) -> None:
    admin = typer.Typer(
        no_args_is_help=True, add_completion=False, help="The team service's workspaces, users and tokens."
    )
    app.add_typer(admin, name="admin")
    _workspaces(admin)
    _users(admin)
    _tokens(admin)
    from cli.admin import register_data

    register_data(admin)  # backup, restore, upgrade


def _workspaces(admin: typer.Typer) -> None:
    group = typer.Typer(no_args_is_help=True, add_completion=False, help="Workspaces in DATA/workspaces/.")
    admin.add_typer(group, name="workspace")

    @group.command("add")
    def workspace_add(
        name: str,
        data: str = DataOpt,
        remote: str | None = typer.Option(
            None,
            "--remote",
            help="Mirror this git remote (cloned now): the service syncs with it. "
            "No credential in the URL: SELF_TOKEN or the credentials file.",
        ),
        secret_env: str | None = typer.Option(
            None,
            "--webhook-secret-env",
            help="The environment variable holding the push webhook's secret (VAR_PREVIOUS: "
            "the one being rotated out).",
        ),
        poll: float | None = typer.Option(
            None, "--poll", help="Seconds between polls of the remote (default 60; 0: none)."
        ),
        as_json: bool = JsonOpt,
    ) -> None:
        """Create workspace NAME (a new store in DATA/workspaces/NAME, or a mirror of --remote)."""
        show(team.add_workspace(data, name, remote, secret_env, poll), as_json, team.created_text)

    @group.command("list")
    def workspace_list(data: str = DataOpt, as_json: bool = JsonOpt) -> None:
        """Every workspace of DATA."""
        show(team.workspaces(data), as_json, "\n".join)


def _users(admin: typer.Typer) -> None:
    group = typer.Typer(no_args_is_help=True, add_completion=False, help="Users of the service.")
    admin.add_typer(group, name="user")

    @group.command("add")
    def user_add(name: str, data: str | None = DataOrIdentityOpt, identity: str | None = IdentityOpt) -> None:
        """Add user NAME."""
        team.add_user(data, name, identity)
        echo(f"added user {name}")

    @group.command("list")
    def user_list(
        data: str | None = DataOrIdentityOpt, identity: str | None = IdentityOpt, as_json: bool = JsonOpt
    ) -> None:
        """Every user."""
        show(team.users(data, identity), as_json, "\n".join)


def _tokens(admin: typer.Typer) -> None:
    group = typer.Typer(no_args_is_help=True, add_completion=False, help="API tokens.")
    admin.add_typer(group, name="token")

    @group.command("create")
    def token_create(
        user: str,
        workspace: str = typer.Option(..., "--workspace", help="The one workspace the token opens."),
        role: str = typer.Option(..., "--role", help="reader, writer or admin."),
        data: str | None = DataOrIdentityOpt,
        identity: str | None = IdentityOpt,
    ) -> None:
        """Create a token for USER; prints the token alone on stdout, this once."""
        new = team.create_token(data, user, workspace, role, identity)
        typer.echo(new.token)
        print(
            f"token {new.id}: {new.user} as {new.role} on {new.workspace}; it is not shown again",
            file=sys.stderr,
        )

    @group.command("revoke")
    def token_revoke(
        token_id: str = typer.Argument(..., metavar="ID"),
        data: str | None = DataOrIdentityOpt,
        identity: str | None = IdentityOpt,
    ) -> None:
        """Revoke token ID at once, on every service that shares its identity."""
        row = team.revoke_token(data, token_id, identity)
        echo(f"revoked {row.id} ({row.user} as {row.role} on {row.workspace}) at {row.revoked}")

    @group.command("list")
    def token_list(
        workspace: str | None = typer.Option(None, "--workspace", help="Only this workspace's tokens."),
        data: str | None = DataOrIdentityOpt,
        identity: str | None = IdentityOpt,
        as_json: bool = JsonOpt,
    ) -> None:
        """Every token: id, prefix, user, workspace, role, created, last used, revoked."""
        show(team.tokens(data, workspace, identity), as_json, _token_lines)


def _token_lines(rows: list[TokenRow]) -> str:
    lines = []
    for r in rows:
        state = f"revoked {r.revoked}" if r.revoked else "active"
        used = r.last_used or "never"
        lines.append(
            f"{r.id}  {r.prefix}…  {r.user}  {r.workspace}  {r.role}  {r.created}  used {used}  {state}"
        )
    return "\n".join(lines)
