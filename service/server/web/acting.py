"""The web view's forms that write: an action on a record (confirm, decline, review, assess,
and a work unit's start, block, unblock, report, done) and a new record from the project page.

Each is a writer's: the guard (`writer`) refuses a form another site posted and a token short
of the `command` role (a reader gets 403, and its pages show no form) before the body is read;
the handler checks the session's form token (`session.check_form`), parses the form into the
command value `POST …/commands` runs (`actions`), and runs it the same way
(`api.writes.run_command`): the write reaches every open page through the live stream. Done,
it redirects back to the page the form was on; refused by a rule, it shows that page again with
the refusal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import anyio.to_thread
from litestar import Response, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect

from service.core.errors import Invalid, Refused
from service.server.api import fresh, guard
from service.server.api.errors import problem_of
from service.server.api.routes import AnyRequest, origin_of, reading
from service.server.api.writes import run_command
from service.server.web import actions, pages, session
from service.server.web.actions import ActionForm, AddForm
from service.server.web.templating import href, page

if TYPE_CHECKING:
    from litestar.connection import ASGIConnection
    from litestar.handlers.base import BaseRouteHandler

    from service.adapters.auth.tokens import Grant
    from service.core.commands.requests import AnyCommand

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)


async def writer(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """The guard of every form that writes: posted from this service's own page, by a session
    whose token may run commands on the workspace the path names."""
    session.same_origin(connection)
    await anyio.to_thread.run_sync(_authorize, connection, str(connection.path_params["ws"]))


def _authorize(connection: ASGIConnection[Any, Any, Any, Any], workspace: str) -> None:
    guard.authorize(connection.app.state["data"], connection, workspace, "command", session.cookie_session)


@post("/ws/{ws:str}/projects/{slug:str}/records/{record:str}/{action:str}", guards=[writer])
async def act(
    request: AnyRequest,
    ws: str,
    slug: str,
    record: str,
    action: str,
    data: Annotated[ActionForm, FORM],
) -> Response[Any]:
    """`action` on `record`; back to the record's page, or the project's (`back`)."""
    session.check_form(request, data.form_token)
    shown = record if data.back == "record" else None
    try:
        command = actions.command_of(action, record, data)
        commit = await _run(request, ws, slug, command)
    except (Invalid, Refused) as exc:
        return await anyio.to_thread.run_sync(_refused, request, ws, slug, shown, exc)
    return _back(ws, slug, shown, commit)


@post("/ws/{ws:str}/projects/{slug:str}/records", guards=[writer])
async def add(request: AnyRequest, ws: str, slug: str, data: Annotated[AddForm, FORM]) -> Response[Any]:
    """A new record of the form's kind; back to the project's page."""
    session.check_form(request, data.form_token)
    try:
        commit = await _run(request, ws, slug, actions.added(data))
    except (Invalid, Refused) as exc:
        return await anyio.to_thread.run_sync(_refused, request, ws, slug, None, exc, data)
    return _back(ws, slug, None, commit)


async def _run(request: AnyRequest, ws: str, slug: str, command: AnyCommand) -> str | None:
    """Run `command` as the session's user: the commit that holds its events."""
    given: Grant = request.state[guard.GRANT]
    return (await run_command(request, ws, slug, origin_of(given.user), command)).commit


def _back(ws: str, slug: str, record: str | None, commit: str | None) -> Redirect:
    """Back to the page the form was on, naming the commit of the write as every write's answer does."""
    parts = ("ws", ws, "projects", slug, *(("records", record) if record else ()))
    headers = {fresh.COMMIT: commit} if commit is not None else None
    return Redirect(href(*parts), status_code=303, headers=headers)


def _refused(
    request: AnyRequest,
    ws: str,
    slug: str,
    record: str | None,
    exc: Exception,
    added: AddForm | None = None,
) -> Response[Any]:
    """The page the form was on, again, with the refusal (and the add form as it was sent)."""
    status, problem, _ = problem_of(request, exc)
    with reading(request, ws, slug) as view:
        if record is None:
            return page(
                "project.html", request, status, ws=ws, slug=slug, doc=pages.project(view),
                refusal=problem, added=added,
            )  # fmt: skip
        return page(
            "record.html", request, status, ws=ws, slug=slug, doc=pages.record(view, record), refusal=problem
        )


ROUTES = [act, add]
