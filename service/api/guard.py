"""Who is calling and what they may do: the bearer token, checked on every request (no cache,
so a revoke works at once), its workspace and its role (`service.model.team`).

`check` is the litestar guard of every `/api/v1` route: it runs before litestar reads the
query or the body, so a caller that may not call is refused before any of its input is judged
(a bad query value from no token is a 401, not a 400). The route names its action in
`opt={"action": …}` and its workspace as the path parameter `ws`. The grant it finds is kept
for the rest of that one request, so the handler's own `authorize` reads the token once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from service.api.errors import Forbidden, Unauthenticated

if TYPE_CHECKING:
    from litestar.connection import ASGIConnection
    from litestar.handlers.base import BaseRouteHandler

    from service.auth.tokens import Grant
    from service.data.workspaces import Data
    from service.model.team import Action

    Connection = ASGIConnection[Any, Any, Any, Any]

GRANT = "selfhub.grant"  # the request's grant, in its scope state


def bearer(request: Connection) -> str:
    """The token of the `Authorization: Bearer …` header; Unauthenticated without one."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated()
    return token.strip()


def grant(data: Data, request: Connection) -> Grant:
    """What the request's token grants, read from DATA/auth.sqlite once per request."""
    from service.auth.errors import NotAuthenticated
    from service.auth.tokens import Auth

    found: Grant | None = request.state.get(GRANT)
    if found is not None:
        return found
    token = bearer(request)
    with Auth(data) as auth:
        try:
            found = auth.authenticate(token)
        except NotAuthenticated:
            raise Unauthenticated() from None
    request.state[GRANT] = found
    return found


def authorize(data: Data, request: Connection, workspace: str, action: Action) -> Grant:
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


def _admit(data: Data, connection: Connection, action: Action) -> None:
    workspace = connection.path_params.get("ws")
    if workspace is None:
        grant(data, connection)  # a route of the token's own workspace, whichever it is
    else:
        authorize(data, connection, str(workspace), action)


async def check(connection: Connection, handler: BaseRouteHandler) -> None:
    """The guard: the route's action (`opt["action"]`) on the workspace its path names."""
    import anyio.to_thread

    from service.model.team import ACTIONS

    action = handler.opt.get("action")
    if action not in ACTIONS:  # a route that names no action is refused to everyone
        raise Forbidden("this route names no action a role allows")
    data: Data = connection.app.state["data"]
    await anyio.to_thread.run_sync(_admit, data, connection, action)
