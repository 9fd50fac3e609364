"""The web view's session: the API token itself, kept in an HttpOnly, SameSite=Strict cookie
(Secure when served over https) and checked on every request as the API checks a bearer
token (`service/server/api/guard.py`: the same Auth, the same roles; no server-side session).

Forgery: the cookie is SameSite=Strict, so a page of another site never makes a browser send
it; the two forms that take no cookie-authorized action — sign-in and sign-out — also refuse a
post whose `Origin` is another site's (`same_origin`), so no other page can sign a person in
with a token of its own choosing. No CSRF token is needed on top of that."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from litestar.datastructures import Cookie

from service.server.api.errors import Unauthenticated
from service.server.web.errors import CrossOrigin

if TYPE_CHECKING:
    from litestar.connection import ASGIConnection

    Connection = ASGIConnection[Any, Any, Any, Any]

COOKIE = "selfhub_token"
MAX_AGE_S = 12 * 3600  # the browser forgets it after a working day; the token itself stays valid


def cookie_token(connection: Connection) -> str:
    """The token of the view's cookie (`guard.grant`'s `presented`); Unauthenticated without one."""
    token = connection.cookies.get(COOKIE, "").strip()
    if not token:
        raise Unauthenticated()
    return token


def secure(connection: Connection) -> bool:
    """Served over https (uvicorn reads a trusted proxy's `X-Forwarded-Proto` into the scheme)."""
    return connection.url.scheme == "https"


def signed_in(token: str, connection: Connection) -> Cookie:
    return Cookie(
        key=COOKIE,
        value=token,
        path="/",
        max_age=MAX_AGE_S,
        httponly=True,
        samesite="strict",
        secure=secure(connection),
    )


def signed_out(connection: Connection) -> Cookie:
    return Cookie(
        key=COOKIE, value="", path="/", max_age=0, httponly=True, samesite="strict", secure=secure(connection)
    )


def same_origin(connection: Connection) -> None:
    """Refuse a form another site posted: its `Origin` (every browser sends one with a POST)
    names another host than the one the request was sent to. Without `Origin` (a client that is
    not a browser) `Sec-Fetch-Site` is read when sent; with neither, nothing a browser did."""
    origin = connection.headers.get("origin")
    if origin is not None:
        if origin == "null" or urlsplit(origin).netloc.lower() != connection.headers.get("host", "").lower():
            raise CrossOrigin()
        return
    if connection.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        raise CrossOrigin()


def local_path(target: str) -> str:
    """Where to go after signing in: a path of this service only (no other host, no scheme)."""
    parts = urlsplit(target)
    if (
        not target.startswith("/")
        or target.startswith("//")
        or parts.scheme
        or parts.netloc
        or "\\" in target
    ):
        return "/"
    return target
