"""The `/api/v1` routes. Each one is authorized before litestar reads its input (`guard.check`,
the route's action in `opt`), then makes one call to the application layer and answers its
bytes (`reads`) or its refusal (`errors`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import anyio.to_thread
from litestar import Request, Response, get, post

from service.api import bodies, guard, openapi, reads
from service.model.context import ContextDoc
from service.model.requests import AnyCommand
from service.model.status import StatusDoc

if TYPE_CHECKING:
    from service.data.workspaces import Data
    from service.workspace import Workspace

AnyRequest = Request[Any, Any, Any]
JSON = "application/json"
PLAIN = "text/plain"  # litestar adds "; charset=utf-8"
READ = {"action": "read"}  # the action `guard.check` authorizes (service/model/team.py)
COMMAND = {"action": "command"}


def data_of(request: AnyRequest) -> Data:
    data: Data = request.app.state["data"]
    return data


def open_workspace(data: Data, name: str, project: str | None, by: str, actor: str = "human") -> Workspace:
    """Workspace `name` of DATA, on `project`, writing as user `by`."""
    from service.model.errors import Invalid
    from service.model.events import Origin
    from service.workspace import Workspace

    if actor not in ("agent", "human"):
        raise Invalid(f"X-Selfhub-Actor {actor!r} is neither agent nor human", field="actor")
    origin = Origin("agent" if actor == "agent" else "human", True, None, by)
    return Workspace(data.open(name), project, origin)


def reader(request: AnyRequest, ws: str, slug: str | None = None) -> Workspace:
    data = data_of(request)
    given = guard.authorize(data, request, ws, "read")
    return open_workspace(data, ws, slug, given.user)


def answer(body: bytes, media_type: str = JSON, status: int = 200) -> Response[bytes]:
    return Response(body, status_code=status, media_type=media_type)


@get(
    "/api/v1/workspaces",
    sync_to_thread=True,
    guards=[guard.check],
    opt=READ,
    security=openapi.SECURITY,
    responses=openapi.answers(list[str], 401),
)
def workspaces(request: AnyRequest) -> Response[bytes]:
    """The workspaces the caller may read: the one its token opens."""
    data = data_of(request)
    given = guard.grant(data, request)
    return answer(reads.as_json([given.workspace] if data.has(given.workspace) else []))


@get(
    "/api/v1/workspaces/{ws:str}/projects",
    sync_to_thread=True,
    guards=[guard.check],
    opt=READ,
    security=openapi.SECURITY,
    responses=openapi.answers(list[bodies.ProjectRow], *openapi.READ_ERRORS),
)
def projects(request: AnyRequest, ws: str) -> Response[bytes]:
    return answer(reads.projects(reader(request, ws)))


@get(
    "/api/v1/workspaces/{ws:str}/projects/{slug:str}/context",
    sync_to_thread=True,
    guards=[guard.check],
    opt=READ,
    security=openapi.SECURITY,
    responses=openapi.answers(ContextDoc, *openapi.READ_ERRORS),
    operation_class=openapi.operation(plain=True),
)
def context(
    request: AnyRequest,
    ws: str,
    slug: str,
    format: Literal["plain", "json"] = "plain",
    budget: int | None = None,
) -> Response[bytes]:
    body = reads.context(reader(request, ws, slug), format, budget)
    return answer(body, JSON if format == "json" else PLAIN)


@get(
    "/api/v1/workspaces/{ws:str}/projects/{slug:str}/status",
    sync_to_thread=True,
    guards=[guard.check],
    opt=READ,
    security=openapi.SECURITY,
    responses=openapi.answers(StatusDoc, *openapi.READ_ERRORS),
)
def status(request: AnyRequest, ws: str, slug: str) -> Response[bytes]:
    return answer(reads.status(reader(request, ws, slug)))


@get(
    "/api/v1/workspaces/{ws:str}/projects/{slug:str}/state",
    sync_to_thread=True,
    guards=[guard.check],
    opt=READ,
    security=openapi.SECURITY,
    responses=openapi.answers(list[bodies.EntityRow], *openapi.READ_ERRORS),
)
def state(
    request: AnyRequest, ws: str, slug: str, all: bool = False, at: str | None = None
) -> Response[bytes]:
    return answer(reads.state_rows(reader(request, ws, slug), all, at))


@get(
    "/api/v1/workspaces/{ws:str}/projects/{slug:str}/entities/{record:str}",
    sync_to_thread=True,
    guards=[guard.check],
    opt=READ,
    security=openapi.SECURITY,
    responses=openapi.answers(bodies.Shown, *openapi.READ_ERRORS),
)
def entity(
    request: AnyRequest, ws: str, slug: str, record: str, history: bool = True, at: str | None = None
) -> Response[bytes]:
    """One record (by id or unique prefix), with its own events unless `history=0`."""
    return answer(reads.record(reader(request, ws, slug), record, history, at))


@post(
    "/api/v1/workspaces/{ws:str}/commands",
    status_code=201,
    guards=[guard.check],
    opt=COMMAND,
    security=openapi.SECURITY,
    responses=openapi.answers(bodies.Written, *openapi.COMMAND_ERRORS, status=201),
    operation_class=openapi.operation(body=AnyCommand),
)
async def commands(request: AnyRequest, ws: str, project: str | None = None) -> Response[bytes]:
    """Run one command value (`service.model.requests`) as the token's user; `project` is the
    project a new record goes to (the CLI's `--project`)."""
    data = data_of(request)
    given = await anyio.to_thread.run_sync(guard.authorize, data, request, ws, "command")
    body = await request.body()  # over the app's body cap: a 413 problem
    actor = request.headers.get("x-selfhub-actor", "human")
    return await anyio.to_thread.run_sync(_run, data, ws, project, given.user, actor, body)


def _run(data: Data, ws: str, project: str | None, user: str, actor: str, body: bytes) -> Response[bytes]:
    from service.app import execute
    from service.model.requests import decode

    command = decode(body)
    workspace = open_workspace(data, ws, project, user, actor)
    return answer(reads.written(list(execute(workspace, command))), status=201)


ROUTES = [workspaces, projects, context, status, state, entity, commands]
