"""`GET /api/v1/whoami`: who the caller's token is (its user, workspace and role), what
`self login` checks a token with before it keeps it. Any valid token may ask; the guard
answers 401 for one that is missing, unknown or revoked."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, get

from service.server.api import guard, openapi


class WhoAmI(msgspec.Struct, frozen=True):
    """The token's user, the workspace it opens and its role there."""

    user: str
    workspace: str
    role: str


@get(
    "/api/v1/whoami",
    sync_to_thread=False,
    **openapi.protected("read"),
    responses=openapi.answers(WhoAmI, 401),
)
def whoami(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The caller's token: its user, workspace and role (the guard has read it already)."""
    given = guard.grant(request.app.state["data"], request)
    body = msgspec.json.encode(WhoAmI(given.user, given.workspace, given.role))
    return Response(body, media_type="application/json")


ROUTES = [whoami]
