"""Who is calling and what they may do: the bearer token, checked on every request (no cache,
so a revoke works at once), its workspace and its role (`service.core.commands.team`). The
token is looked up in the identity port the composition root chose (`app.state["identity"]`:
DATA/auth.sqlite, or the PostgreSQL database several instances share): a check is one indexed
query. An identity database that cannot be reached is a 503 (`identity-unavailable`, with
`Retry-After`), never an allow.

`check` guards every `/api/v1` route (its `before_request` hook): it runs before litestar
reads the query or the body, so a caller that may not call is refused before any of its
input is judged (a bad query value from no token is a 401, not a 400). The route names its
action in `opt={"action": …}` and its workspace as the path parameter `ws`. The grant it
finds is kept for the rest of that one request (the handler's own `authorize` reads the
token once, the request's log line names its user), and the rate limit is charged where the
caller is known."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from service.server.api.errors import ApiError, Forbidden, Unauthenticated

if TYPE_CHECKING:
    from litestar.connection import ASGIConnection

    from service.adapters.auth.port import Grant, Identity
    from service.adapters.data.workspaces import Data
    from service.core.commands.team import Action
    from service.server.api.grants import Grants
    from service.server.api.limits import Limiter

    Connection = ASGIConnection[Any, Any, Any, Any]

GRANT = "grant"  # the key of the request's state that holds its grant
IDENTITY = "identity"  # the key of the app's state that holds its identity port


class IdentityDown(ApiError):
    """The identity database cannot be reached: nobody is let in until it is back. The answer
    does not say where the database is (the driver's reason names its address)."""

    code = "identity-unavailable"

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(
            "the identity database cannot be reached; nothing that needs a token is answered until "
            f"it is back: retry in {retry_after_s} s"
        )
        self.retry_after_s = retry_after_s

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_s)}


def presented_token(request: Connection) -> str:
    """The token of the `Authorization` header: `Bearer TOKEN`, or HTTP basic with the token
    as the password (what git sends; any user name); Unauthenticated without one."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    token = value.strip()
    if scheme.lower() == "basic":
        try:
            token = base64.b64decode(token, validate=True).decode("utf-8").partition(":")[2]
        except (binascii.Error, UnicodeDecodeError):
            raise Unauthenticated() from None
    elif scheme.lower() != "bearer":
        raise Unauthenticated()
    if not token:
        raise Unauthenticated()
    return token


class Session(str):
    """A web session's id as the web view's cookie presents it (`service/server/web/session.py`):
    checked as a session, never as a token, so neither opens what the other does."""

    __slots__ = ()


Presented = Callable[["Connection"], str]  # where a request's credential is read from: a token or a Session


def grant(data: Data, request: Connection, presented: Presented = presented_token) -> Grant:
    """What the request's credential grants, read from the identity once per request. The
    rate limit is charged then: to the token, else to the client's address. The credential is
    read by `presented`: the `Authorization` header's token, or the web view's session
    (`service/server/web/session.py`), which grants what the token it was opened with does."""
    from service.adapters.auth.errors import NotAuthenticated

    found: Grant | None = request.state.get(GRANT)
    if found is not None:
        return found
    try:
        credential = presented(request)
        found = _granted(identity_of(request), credential)
    except (Unauthenticated, NotAuthenticated):
        _charge(request, f"addr:{request.client.host if request.client else '-'}")
        raise Unauthenticated() from None
    request.state[GRANT] = found
    _charge(request, f"token:{found.token_id}")
    grants: Grants | None = request.app.state.get("grants")
    if grants is not None and not isinstance(credential, Session):  # a session is checked each time
        grants.keep(credential, found)
    return found


def _granted(identity: Identity, credential: str) -> Grant:
    """What a token, or a web session (a `Session`), grants, read afresh: a session grants
    what the token it was opened with does, while both hold; NotAuthenticated when nothing,
    IdentityDown when the identity cannot be asked."""
    from service.adapters.auth.errors import IdentityUnavailable

    try:
        if isinstance(credential, Session):
            return identity.session(credential)
        return identity.authenticate(credential)
    except IdentityUnavailable as exc:
        raise IdentityDown(exc.retry_after_s) from None


def identity_of(connection: Connection) -> Identity:
    """The app's identity port (users, tokens, web sessions)."""
    found: Identity = connection.app.state[IDENTITY]
    return found


def _charge(request: Connection, key: str) -> None:
    limiter: Limiter | None = request.app.state.get("limiter")
    if limiter is not None:
        limiter.charge(key)


def authorize(
    data: Data, request: Connection, workspace: str, action: Action, presented: Presented = presented_token
) -> Grant:
    """The grant when the token opens `workspace` for `action`. A workspace the token is not
    for and one that does not exist get the same answer; a role short of `action` is told
    which role it takes (the caller already knows that workspace)."""
    given = grant(data, request, presented)
    _allow(data, given, workspace, action, exists=_open(request, workspace) or None)
    return given


def still(
    data: Data, request: Connection, workspace: str, action: Action, presented: Presented = presented_token
) -> bool:
    """Whether the credential `request` was let in with still opens `workspace` for `action`, read
    afresh: what `authorize` checks, asked again by an open stream (`live/feed.py: Watch`),
    never charged to the rate limit. An identity that cannot be asked ends the stream too."""
    from service.adapters.auth.errors import NotAuthenticated

    try:
        given = _granted(identity_of(request), presented(request))
        _allow(data, given, workspace, action, exists=_open(request, workspace) or None)
    except (Unauthenticated, NotAuthenticated, Forbidden, IdentityDown):
        return False
    return True


def _open(connection: Connection, workspace: str) -> bool:
    """Whether the service holds `workspace` open: it exists, without asking DATA."""
    hub = connection.app.state.get("hub")
    return hub is not None and hub.held(workspace) is not None


def _allow(data: Data, given: Grant, workspace: str, action: Action, exists: bool | None = None) -> None:
    """`exists`: known already (an open workspace), else DATA is asked."""
    from service.core.commands.team import check
    from service.core.errors import Refused

    if given.workspace != workspace or not (exists or data.has(workspace)):
        raise Forbidden()
    try:
        check(given.role, action)
    except Refused as exc:
        raise Forbidden(str(exc)) from None


def _admit(data: Data, connection: Connection, action: Action) -> None:
    workspace = connection.path_params.get("ws")
    if workspace is None:
        grant(data, connection)  # a route of the token's own workspace, whichever it is
    else:
        authorize(data, connection, str(workspace), action)


async def check(connection: Connection) -> None:
    """The guard: the route's action (`opt["action"]`) on the workspace its path names. It
    runs as the route's `before_request` hook, which litestar calls before it reads the query
    or the body, as it would a guard; a guard is handed a copy of the route's handler, made
    for each request (about 5% of a post's time on the event loop)."""
    import anyio.to_thread

    from service.core.commands.team import ACTIONS

    action = connection.route_handler.opt.get("action")
    if action not in ACTIONS:  # a route that names no action is refused to everyone
        raise Forbidden("this route names no action a role allows")
    data: Data = connection.app.state["data"]
    grants: Grants | None = connection.app.state.get("grants")
    if grants is not None:
        if _admit_known(data, connection, action, grants):
            return
        grants.watch()
    await anyio.to_thread.run_sync(_admit, data, connection, action)


def _admit_known(data: Data, connection: Connection, action: Action, grants: Grants) -> bool:
    """Admit on the event loop a token checked before (`grants.py`); False: check it now."""
    try:
        found = grants.known(presented_token(connection))
    except Unauthenticated:
        return False
    if found is None:
        return False
    connection.state[GRANT] = found
    _charge(connection, f"token:{found.token_id}")
    workspace = connection.path_params.get("ws")
    if workspace is not None:
        _allow(data, found, str(workspace), action, exists=_open(connection, str(workspace)) or None)
    return True
