"""Who is calling and what they may do: the bearer token, checked on every request (no cache,
so a revoke works at once), its workspace and its role (`service.model.team`). Each thread
keeps its own connection to DATA/auth.sqlite open: a check is one indexed query."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from service.api.errors import Forbidden, Unauthenticated

GRANT = "grant"  # the key of the request's state that holds its grant

if TYPE_CHECKING:
    from litestar import Request

    from service.api.limits import Limiter
    from service.auth.tokens import Auth, Grant
    from service.data.workspaces import Data
    from service.model.team import Action

_held = threading.local()


def bearer(request: Request[Any, Any, Any]) -> str:
    """The token of the `Authorization: Bearer …` header; Unauthenticated without one."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated()
    return token.strip()


def grant(data: Data, request: Request[Any, Any, Any]) -> Grant:
    """What the request's token grants, read from DATA/auth.sqlite now. The rate limit is
    charged here, where the caller is known: to the token, else to the client's address."""
    from service.auth.errors import NotAuthenticated

    try:
        found = _auth(data).authenticate(bearer(request))
    except (Unauthenticated, NotAuthenticated):
        _charge(request, f"addr:{request.client.host if request.client else '-'}")
        raise Unauthenticated() from None
    request.state[GRANT] = found  # for the request's log line (service/api/observe.py)
    _charge(request, f"token:{found.token_id}")
    return found


def _charge(request: Request[Any, Any, Any], key: str) -> None:
    limiter: Limiter | None = request.app.state.get("limiter")
    if limiter is not None:
        limiter.charge(key)


def _auth(data: Data) -> Auth:
    """This thread's connection to the data directory's users and tokens."""
    from service.auth.tokens import Auth

    held: dict[object, Auth] = _held.__dict__.setdefault("auth", {})
    if data.root not in held:
        held[data.root] = Auth(data)
    return held[data.root]


def authorize(data: Data, request: Request[Any, Any, Any], workspace: str, action: Action) -> Grant:
    """The grant when the token opens `workspace` for `action`. A workspace the token is not
    for and one that does not exist get the same answer; a role short of `action` is told
    which role it takes (the caller already knows that workspace)."""
    from service.model.errors import Refused
    from service.model.team import check

    given = grant(data, request)
    if given.workspace != workspace or not data.has(workspace):
        raise Forbidden()
    try:
        check(given.role, action)
    except Refused as exc:
        raise Forbidden(str(exc)) from None
    return given
