"""The web view's session: signing in exchanges the API token for a server-side session
(`Identity.open_session`: a random id, stored hashed in the identity — DATA/auth.sqlite or the
shared PostgreSQL database — with its expiry and the token it was opened with). The cookie
holds the session's id only, HttpOnly, SameSite=Strict, Secure when served over https. Every
request checks it through the guard (`service/server/api/guard.py`, `presented` =
`cookie_session`): the session valid, unexpired, its token valid and unrevoked; it grants what
that token grants. Signing out deletes the session, revoking the token deletes its sessions,
and a session id is no bearer token.

Forgery: the cookie is SameSite=Strict, so a page of another site never makes a browser send
it; every form refuses a post whose `Origin` is another site's (`same_origin`), so no other
page can sign a person in with a token of its own choosing. The forms that write (confirm,
add, …) carry a token of the session besides (`form_token`, checked by `check_form`): a
keyed hash of the session's id, which only a page served to that session holds."""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from litestar.datastructures import Cookie

from service.server.api.errors import Unauthenticated
from service.server.api.guard import IdentityDown, Session, identity_of
from service.server.web.errors import CrossOrigin, StaleForm

if TYPE_CHECKING:
    from litestar.connection import ASGIConnection

    Connection = ASGIConnection[Any, Any, Any, Any]

COOKIE = "selfhub_session"
FORM_FIELD = "form_token"  # the hidden field of every form that writes
MAX_AGE_S = 12 * 3600  # a session ends after a working day; the token itself stays valid


def cookie_session(connection: Connection) -> Session:
    """The session of the view's cookie (`guard.grant`'s `presented`: the guard checks it, on
    every request and whenever a request's credential is checked again); Unauthenticated
    without one."""
    found = connection.cookies.get(COOKIE, "").strip()
    if not found:
        raise Unauthenticated()
    return Session(found)


def opened(connection: Connection, token: str) -> str:
    """A new session of `token` (already checked by the guard): its id, for the cookie."""
    from service.adapters.auth.errors import IdentityUnavailable

    try:
        return identity_of(connection).open_session(token, MAX_AGE_S)[0]
    except IdentityUnavailable as exc:
        raise IdentityDown(exc.retry_after_s) from None


def ended(connection: Connection) -> None:
    """Delete the session of the request's cookie, if it holds one."""
    from service.adapters.auth.errors import IdentityUnavailable

    found = connection.cookies.get(COOKIE, "").strip()
    if found:
        try:
            identity_of(connection).end_session(found)
        except IdentityUnavailable as exc:
            raise IdentityDown(exc.retry_after_s) from None


def secure(connection: Connection) -> bool:
    """Served over https (uvicorn reads a trusted proxy's `X-Forwarded-Proto` into the scheme)."""
    return connection.url.scheme == "https"


def signed_in(session: str, connection: Connection) -> Cookie:
    return Cookie(
        key=COOKIE,
        value=session,
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


def form_token(connection: Connection) -> str | None:
    """The token the pages of the request's session put in their forms: an HMAC-SHA256 keyed by
    the session's id, which says nothing of the id; None without a cookie."""
    found = connection.cookies.get(COOKIE, "").strip()
    if not found:
        return None
    return hmac.new(found.encode(), b"selfhub web form", hashlib.sha256).hexdigest()


def check_form(connection: Connection, given: str) -> None:
    """Refuse a form that does not carry its session's token (one from an older session, or
    made anywhere but a page this session was served)."""
    expected = form_token(connection)
    if expected is None or not hmac.compare_digest(expected.encode(), given.encode()):
        raise StaleForm()
