"""The `/api/v1` routes. Each one is authorized before litestar reads its input (`guard.check`,
the route's action in `opt`), then makes one call to the application layer and answers its
bytes (`reads`) or its refusal (`errors`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

from litestar import Request, Response, get

from service.core.projections.context import ContextDoc
from service.core.projections.status import StatusDoc
from service.server.api import bodies, guard, openapi, reads

if TYPE_CHECKING:
    from service.adapters.data.workspaces import Data
    from service.core.events.events import Origin
    from service.server.live.hub import Hub
    from service.server.live.view import View

AnyRequest = Request[Any, Any, Any]
JSON = "application/json"
PLAIN = "text/plain"  # litestar adds "; charset=utf-8"


def data_of(request: AnyRequest) -> Data:
    data: Data = request.app.state["data"]
    return data


def hub_of(request: AnyRequest) -> Hub:
    hub: Hub = request.app.state["hub"]
    return hub


def origin_of(user: str, actor: str = "human") -> Origin:
    """Who writes: the token's user, as a person or (`X-Selfhub-Actor: agent`) an agent."""
    from service.core.errors import Invalid
    from service.core.events.events import Origin

    if actor not in ("agent", "human"):
        raise Invalid(f"X-Selfhub-Actor {actor!r} is neither agent nor human", field="actor")
    return Origin("agent" if actor == "agent" else "human", True, None, user)


@contextmanager
def reading(request: AnyRequest, ws: str, slug: str | None = None) -> Iterator[View]:
    """The caller's read of workspace `ws` on project `slug`, once its token may read it."""
    given = guard.authorize(data_of(request), request, ws, "read")
    from service.server.live import view

    with view.reading(hub_of(request).workspace(ws), slug, origin_of(given.user)) as held:
        yield held


def answer(body: bytes, media_type: str = JSON, status: int = 200) -> Response[bytes]:
    return Response(body, status_code=status, media_type=media_type)


KEPT_ANSWERS = 64  # per workspace and state version: a caller varying `budget` cannot fill memory


def remembered(view: View, key: tuple[object, ...], make: Callable[[], bytes]) -> bytes:
    """An answer computed once per version of the workspace's states (at most KEPT_ANSWERS
    of them are kept; past that the oldest goes). The callers that ask for it while it is
    being rendered wait for that rendering rather than each render it again, so a write
    under many readers costs one rendering, and the writer waits for one reader at most."""
    found = view.live.rendered.get(key)
    if found is not None:
        return found
    with view.live.rendering:
        kept = view.live.rendered  # the view holds the states still: the same version
        found = kept.get(key)
        if found is None:
            found = kept[key] = make()
            while len(kept) > KEPT_ANSWERS:
                kept.pop(next(iter(kept)), None)
    return found


@get(
    "/api/v1/workspaces",
    sync_to_thread=True,
    **openapi.protected("read"),
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
    **openapi.protected("read"),
    responses=openapi.answers(list[bodies.ProjectRow], *openapi.READ_ERRORS),
)
def projects(request: AnyRequest, ws: str) -> Response[bytes]:
    with reading(request, ws) as view:
        return answer(reads.projects(view))


@get(
    "/api/v1/workspaces/{ws:str}/projects/{slug:str}/context",
    **openapi.protected("read"),
    responses=openapi.answers(ContextDoc, *openapi.READ_ERRORS),
    operation_class=openapi.operation(plain=True),
)
async def context(
    request: AnyRequest,
    ws: str,
    slug: str,
    format: Literal["plain", "json"] = "plain",
    budget: int | None = None,
) -> Response[bytes]:
    """`self context --plain` / `--json`: from the answers kept for the workspace's current
    state without leaving the event loop (the guard has checked the token), else rendered in
    a worker thread."""
    import anyio.to_thread

    from service.app.workspace import instant

    # the answer moves with the states and with each proposal's expiry (`core/fold/lapse.py`)
    now = instant()
    live = hub_of(request).held(ws)
    lapsed = None if live is None else live.known_lapsed_by(now)
    key = ("context", slug, format, budget, lapsed)
    body = live.rendered.get(key) if live is not None and lapsed is not None and live.settled() else None
    if body is None:
        body = await anyio.to_thread.run_sync(_context, request, ws, slug, format, budget, now)
    return answer(body, JSON if format == "json" else PLAIN)


def _context(
    request: AnyRequest,
    ws: str,
    slug: str,
    format: Literal["plain", "json"],
    budget: int | None,
    now: str,
) -> bytes:
    with reading(request, ws, slug) as view:
        key = ("context", slug, format, budget, view.live.lapsed_by(now))
        return remembered(view, key, lambda: reads.context(view, format, budget))


@get(
    "/api/v1/workspaces/{ws:str}/projects/{slug:str}/status",
    sync_to_thread=True,
    **openapi.protected("read"),
    responses=openapi.answers(StatusDoc, *openapi.READ_ERRORS),
)
def status(request: AnyRequest, ws: str, slug: str) -> Response[bytes]:
    with reading(request, ws, slug) as view:
        return answer(reads.status(view))


@get(
    "/api/v1/workspaces/{ws:str}/projects/{slug:str}/state",
    sync_to_thread=True,
    **openapi.protected("read"),
    responses=openapi.answers(list[bodies.EntityRow], *openapi.READ_ERRORS),
)
def state(
    request: AnyRequest, ws: str, slug: str, all: bool = False, at: str | None = None
) -> Response[bytes]:
    with reading(request, ws, slug) as view:
        return answer(reads.state_rows(view, all, at))


@get(
    "/api/v1/workspaces/{ws:str}/projects/{slug:str}/entities/{record:str}",
    sync_to_thread=True,
    **openapi.protected("read"),
    responses=openapi.answers(bodies.Shown, *openapi.READ_ERRORS),
)
def entity(
    request: AnyRequest, ws: str, slug: str, record: str, history: bool = True, at: str | None = None
) -> Response[bytes]:
    """One record (by id or unique prefix), with its own events unless `history=0`."""
    with reading(request, ws, slug) as view:
        return answer(reads.record(view, record, history, at))


ROUTES = [workspaces, projects, context, status, state, entity]
