"""A team service's data directory as `self admin` works on it: its workspaces, users and API
tokens. The data and auth adapters (SQLite) load only when one of these runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from service.auth.tokens import Auth
    from service.auth.tokens import NewToken as NewToken
    from service.auth.tokens import TokenRow as TokenRow
    from service.data.workspaces import Data


def _data(directory: str) -> Data:
    from service.data.workspaces import Data

    return Data(Path(directory))


def _auth(directory: str) -> Auth:
    from service.auth.tokens import Auth

    return Auth(_data(directory))


class WorkspaceCreated(msgspec.Struct, frozen=True):
    workspace: str
    path: str


def add_workspace(directory: str, name: str) -> WorkspaceCreated:
    """Create workspace `name`: a new store in DATA/workspaces/NAME."""
    return WorkspaceCreated(name, str(_data(directory).add(name).root))


def workspaces(directory: str) -> list[str]:
    return _data(directory).names()


def add_user(directory: str, name: str) -> None:
    with _auth(directory) as auth:
        auth.add_user(name)


def users(directory: str) -> list[str]:
    with _auth(directory) as auth:
        return auth.users()


def create_token(directory: str, user: str, workspace: str, role: str) -> NewToken:
    """A new token for `user` on the one `workspace` it opens; its secret is shown this once."""
    with _auth(directory) as auth:
        return auth.create_token(user, workspace, role)


def revoke_token(directory: str, token_id: str) -> TokenRow:
    with _auth(directory) as auth:
        return auth.revoke(token_id)


def tokens(directory: str, workspace: str | None) -> list[TokenRow]:
    with _auth(directory) as auth:
        return auth.tokens(workspace)
