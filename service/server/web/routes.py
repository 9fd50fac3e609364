"""The web view's routes: pages rendered from the read documents, the sign-in and sign-out
forms, and a cookie-authorized event stream for the pages' live updates.

Every page is authorized by `viewer` before litestar reads its query: the session of the
view's cookie, checked by the guard (`guard.authorize` with `session.cookie_session`), a
reader's role enough. Each handler parses, makes one call (`pages`, `reads`, `search`) and
renders a template; every error is a page (`refusal`): a refused token the sign-in form. The
forms that write are `acting.py`'s."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio.to_thread
import msgspec
from litestar import Request, Response, Router, get, post
from litestar.datastructures import ResponseHeader
from litestar.enums import RequestEncodingType
from litestar.params import Body, QueryParameter
from litestar.response import Redirect, ServerSentEvent, Template
from litestar.static_files import create_static_files_router

from service.server.api import guard, search
from service.server.api.errors import problem_of
from service.server.api.routes import data_of, reading
from service.server.api.stream import following
from service.server.web import acting, pages, session
from service.server.web.templating import page

if TYPE_CHECKING:
    from litestar.connection import ASGIConnection
    from litestar.handlers.base import BaseRouteHandler


AnyRequest = Request[Any, Any, Any]
HERE = Path(__file__).parent
STATIC = HERE / "static"
SEARCH_LIMIT = 50


async def viewer(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """The guard of every page: the cookie's token reads the workspace the path names (any
    workspace's token, on a page that names none)."""
    workspace = connection.path_params.get("ws")
    await anyio.to_thread.run_sync(_admit, connection, None if workspace is None else str(workspace))


def _admit(connection: ASGIConnection[Any, Any, Any, Any], workspace: str | None) -> None:
    data = connection.app.state["data"]
    if workspace is None:
        guard.grant(data, connection, session.cookie_session)
    else:
        guard.authorize(data, connection, workspace, "read", session.cookie_session)


async def forms(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """The guard of the sign-in and sign-out forms: posted from this service's own pages."""
    session.same_origin(connection)


def refusal(request: AnyRequest, exc: Exception) -> Response[Any]:
    """Every error as a page: a refused or missing token the sign-in form (the cookie cleared),
    anything else its problem document's title and detail. Like the API's answers, a refusal
    says nothing of the workspace, project or record the path names."""
    status, document, headers = problem_of(request, exc)
    headers |= {h.name: str(h.value) for h in HEADERS}  # an exception's answer skips the router's
    if status == 401:
        held = session.COOKIE in request.cookies
        shown = page("signin.html", request, 401, refused=held or request.method == "POST")
        shown.headers.update(headers)
        if held:
            shown.cookies.append(session.signed_out(request))
        return shown
    request.state.pop(guard.GRANT, None)  # the page names no workspace, whoever asked
    shown = page("error.html", request, status, problem=document)
    shown.headers.update(headers)
    return shown


class SignIn(msgspec.Struct, frozen=True):
    """The sign-in form: a token, and the page to go back to (this service's own)."""

    token: str = ""
    next: str = "/"


@get("/signin", sync_to_thread=False)
def sign_in_form(request: AnyRequest) -> Template:
    return page("signin.html", request, refused=False)


@post("/signin", guards=[forms], sync_to_thread=True, status_code=303)
def sign_in(
    request: AnyRequest, data: Annotated[SignIn, Body(media_type=RequestEncodingType.URL_ENCODED)]
) -> Redirect:
    """Check the token as the API does; open a session of it, whose id the cookie keeps."""
    from service.server.web.errors import NoToken

    token = data.token.strip()
    if not token:
        raise NoToken()
    guard.grant(data_of(request), request, lambda _: token)
    opened = session.opened(request, token)
    return Redirect(
        session.local_path(data.next), status_code=303, cookies=[session.signed_in(opened, request)]
    )


@post("/signout", guards=[forms], sync_to_thread=True, status_code=303)
def sign_out(request: AnyRequest) -> Redirect:
    """End the cookie's session (its token stays valid) and clear the cookie."""
    session.ended(request)
    return Redirect("/signin", status_code=303, cookies=[session.signed_out(request)])


@get("/", guards=[viewer], sync_to_thread=True)
def home(request: AnyRequest) -> Template:
    """The workspaces the cookie's token opens (one, today)."""
    given = guard.grant(data_of(request), request)
    return page(
        "workspaces.html",
        request,
        workspaces=[given.workspace] if data_of(request).has(given.workspace) else [],
    )


@get("/ws/{ws:str}", guards=[viewer], sync_to_thread=True)
def workspace(request: AnyRequest, ws: str) -> Template:
    with reading(request, ws) as view:
        return page("projects.html", request, ws=ws, projects=view.projects())


@get("/ws/{ws:str}/projects/{slug:str}", guards=[viewer], sync_to_thread=True)
def project(request: AnyRequest, ws: str, slug: str) -> Template:
    with reading(request, ws, slug) as view:
        return page("project.html", request, ws=ws, slug=slug, doc=pages.project(view))


@get("/ws/{ws:str}/projects/{slug:str}/records", guards=[viewer], sync_to_thread=True)
def records(
    request: AnyRequest,
    ws: str,
    slug: str,
    label: str = "",
    stands: Annotated[str, QueryParameter(name="state")] = "",  # `state` is litestar's own name
    text: str = "",
    all: bool = False,
    number: Annotated[int, QueryParameter(name="page")] = 1,  # `page` renders a template here
) -> Template:
    with reading(request, ws, slug) as view:
        found = pages.table(view, pages.Filter(label, stands, text, all, number))
        return page("records.html", request, ws=ws, slug=slug, table=found)


@get("/ws/{ws:str}/projects/{slug:str}/records/{record:str}", guards=[viewer], sync_to_thread=True)
def record(request: AnyRequest, ws: str, slug: str, record: str) -> Template:
    with reading(request, ws, slug) as view:
        return page("record.html", request, ws=ws, slug=slug, doc=pages.record(view, record))


@get("/search", guards=[viewer], sync_to_thread=True)
def find(request: AnyRequest, q: str = "", project: str = "", all: bool = False) -> Template:
    """`GET /api/v1/search`'s answer over the workspaces the token opens, as a page; the form
    alone without words."""
    answer = None
    if q.strip():
        data = data_of(request)
        workspaces = search.readable(data, request, None)
        ask = search.asked(q, project or None, SEARCH_LIMIT, all, None)
        user = guard.grant(data, request).user
        answer = search.answer(
            request.app.state["search"], workspaces, ask, search.live_states(request, user)
        )
    return page("search.html", request, q=q, project=project, all=all, answer=answer)


@get("/ws/{ws:str}/live", guards=[viewer])
async def live(request: AnyRequest, ws: str, project: str | None = None) -> ServerSentEvent:
    """`GET /api/v1/workspaces/WS/stream` for the pages' script, authorized by the cookie's
    session (checked again once a second: a revoked one ends the stream)."""
    return await following(request, ws, project, session.cookie_session)


# Only this service's own script, styles and stream; no frame, no form sent elsewhere.
POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'"
)
HEADERS = [
    ResponseHeader(name="Content-Security-Policy", value=POLICY),
    ResponseHeader(name="X-Content-Type-Options", value="nosniff"),
    ResponseHeader(name="Referrer-Policy", value="same-origin"),
]
PAGES = [sign_in_form, sign_in, sign_out, home, workspace, project, records, record, find, live]
WRITES = acting.ROUTES
ROUTER = Router(
    path="/",
    route_handlers=[
        *PAGES,
        *WRITES,
        create_static_files_router("/static", [STATIC], include_in_schema=False),
    ],
    exception_handlers={Exception: refusal},
    response_headers=HEADERS,
    include_in_schema=False,
)
PATHS = frozenset(route.path for route in ROUTER.routes)  # not the API: no OpenAPI operation
