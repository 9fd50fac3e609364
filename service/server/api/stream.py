"""The log since an id (`GET …/projects/SLUG/events?after=ID`) and the live stream of a
workspace (`GET …/stream`, server-sent events: each committed event as it lands, its id as
the SSE id, resumable with `Last-Event-ID`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

import anyio.to_thread
import msgspec
from litestar import Response, get
from litestar.response import ServerSentEvent, ServerSentEventMessage

from service.core.events.events import Event, canonical
from service.server.api import guard, openapi
from service.server.api.routes import AnyRequest, answer, data_of, hub_of, reading

if TYPE_CHECKING:
    from service.server.api.metrics import Metrics
    from service.server.live.space import LiveWorkspace

MAX_EVENTS = 10_000  # events in one answer of `events?after`
KEEPALIVE_S = 15.0


class EventPage(msgspec.Struct, frozen=True):
    """Events after an id, in id order; `next` is the `after` of the next page (None: no more)."""

    events: list[Event]
    next: str | None


@get(
    "/api/v1/workspaces/{ws:str}/projects/{slug:str}/events",
    sync_to_thread=True,
    **openapi.protected("read"),
    responses=openapi.answers(EventPage, *openapi.READ_ERRORS),
)
def events_after(
    request: AnyRequest, ws: str, slug: str, after: str | None = None, limit: int = 1000
) -> Response[bytes]:
    """The project's events after `after` (from the start without it), at most `limit`."""
    from service.adapters.store.clock import wall_ms
    from service.adapters.store.segments import read_after
    from service.core.errors import Invalid
    from service.core.events import ids

    if not 1 <= limit <= MAX_EVENTS:
        raise Invalid(f"{{limit}} {limit}: give 1 to {MAX_EVENTS:,}", field="limit")
    if after is not None and not ids.is_id(after):
        raise Invalid(f"{{after}} {after!r} is not an event id", field="after")
    if after is not None and ids.beyond_horizon(after, wall_ms()):
        raise Invalid(
            f"{{after}} {after} is dated ahead of the service's clock: no event follows it", field="after"
        )
    with reading(request, ws, slug) as view:
        log = view.require_project()
        found = read_after(view.live.store.root, log, after)
    page = found[:limit]
    more = page[-1].id if len(found) > limit else None
    return answer(msgspec.json.encode(EventPage(page, more)) + b"\n")


@get(
    "/api/v1/workspaces/{ws:str}/stream",
    **openapi.protected("read"),
    responses=openapi.answers(str, 400, 401, 403, media_type="text/event-stream"),
)
async def stream(request: AnyRequest, ws: str, project: str | None = None) -> ServerSentEvent:
    """Every event committed from now on (or after `Last-Event-ID`), optionally of one project."""
    await anyio.to_thread.run_sync(guard.authorize, data_of(request), request, ws, "read")
    return await following(request, ws, project)


async def following(request: AnyRequest, ws: str, project: str | None) -> ServerSentEvent:
    """The stream of workspace `ws` for a caller already authorized to read it (this route's,
    and the web view's, which reads its token from a cookie: `service/server/web/routes.py`)."""
    live = await anyio.to_thread.run_sync(hub_of(request).workspace, ws)
    last = request.headers.get("last-event-id")
    counted: Metrics = request.app.state["metrics"]
    return ServerSentEvent(counted.streaming(_messages(live, last, project)))


async def _messages(
    live: LiveWorkspace, last: str | None, project: str | None
) -> AsyncIterator[ServerSentEventMessage]:
    feed = live.feed
    with feed.waiting() as waiter:
        mark = feed.end()
        if last:
            found = feed.mark_of(last)
            if found is None:  # not kept any more (or never published here): read the logs
                for message in _sent(
                    await anyio.to_thread.run_sync(_logged_after, live, last, mark), project
                ):
                    yield message
            else:
                mark = found
        while not feed.closed:
            got = feed.since(mark)
            if got is None:  # fell behind what is kept: end; the client resumes by its last id
                return
            events, mark = got
            for message in _sent(events, project):
                yield message
            if not events:
                await waiter.wait(KEEPALIVE_S)
                if not feed.closed and feed.end() == mark:
                    yield ServerSentEventMessage(comment="keepalive")


def _sent(events: list[Event], project: str | None) -> Iterator[ServerSentEventMessage]:
    """The messages of `events` (of `project` only, when named): the canonical line, its id."""
    for event in events:
        if project is None or event.project == project:
            yield ServerSentEventMessage(canonical(event).decode().rstrip("\n"), id=event.id)


def _logged_after(live: LiveWorkspace, last: str, mark: int) -> list[Event]:
    """Every event of every log after id `last` that the feed will not send from `mark` on."""
    from service.adapters.store.segments import read_after

    coming = {e.id for e in (live.feed.since(mark) or ([], mark))[0]}
    found = [e for log in live.store.logs() for e in read_after(live.store.root, log, last)]
    return sorted((e for e in found if e.id not in coming), key=lambda e: e.id)


ROUTES = [events_after, stream]
