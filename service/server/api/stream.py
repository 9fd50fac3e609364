"""The events that arrived in a project since a cursor (`GET …/projects/SLUG/events?after=`)
and the live stream of a workspace (`GET …/stream`, server-sent events: each event as it
arrives, its arrival cursor as the SSE id, resumable with `Last-Event-ID`).

A cursor (`EPOCH.N`, `live/feed.py`) numbers arrivals, not ids: an event a sync, a mirror round
or a push brings with an id older than the reader's place is still after its cursor. An event
id given as `after` (or as `Last-Event-ID`) is read as before: the events with a greater id.
An open stream's token is checked again once a second; a revoked one ends it."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, cast

import anyio.to_thread
import msgspec
from litestar import Response, get
from litestar.response import ServerSentEvent, ServerSentEventMessage

from service.app import authors
from service.core.events.events import Event
from service.server.api import guard, openapi
from service.server.api.routes import AnyRequest, answer, data_of, hub_of, reading
from service.server.live.feed import MOST, Feed, arrived, cursor_form
from service.server.live.paced import Encoded, Paced

if TYPE_CHECKING:
    from service.server.api.metrics import Metrics
    from service.server.live.space import LiveWorkspace

MAX_EVENTS = 10_000  # events in one answer of `events?after`
KEEPALIVE_S = 15.0
CHUNK = 16 * 1024  # a stream's messages are sent together up to this many bytes a send


class EventPage(msgspec.Struct, frozen=True):
    """A page of a project's events. Followed by cursor (no `after`, or a cursor): in arrival
    order; `cursor` is where to follow from later, `next` the same when more are there now
    (None: no more for now). After an event id: in id order; `next` is the `after` of the next
    page (None: no more), `cursor` None."""

    events: list[Event]
    next: str | None
    cursor: str | None = None


@get(
    "/api/v1/workspaces/{ws:str}/projects/{slug:str}/events",
    sync_to_thread=True,
    **openapi.protected("read"),
    responses=openapi.answers(EventPage, *openapi.READ_ERRORS),
)
def events_after(
    request: AnyRequest, ws: str, slug: str, after: str | None = None, limit: int = 1000
) -> Response[bytes]:
    """The project's events after `after`, at most `limit`. `after` is a cursor (`EPOCH.N`,
    from a page's `cursor` or `next`, or a stream's event id): every event that arrived since,
    once each, whatever its id, in arrival order — from the first without `after`. An event id
    as `after` pages by id as before: the events with a greater id, in id order."""
    from service.core.errors import Invalid

    if not 1 <= limit <= MAX_EVENTS:
        raise Invalid(f"{{limit}} {limit}: give 1 to {MAX_EVENTS:,}", field="limit")
    if after is not None and cursor_form(after) is None:
        return _by_id(request, ws, slug, after, limit)
    with reading(request, ws, slug) as view:
        log = view.require_project()
        feed = view.live.feed
        mark = _mark(feed, after)
        got = arrived(feed, view.live.store.root, log, mark, limit + 1)
    page = got[:limit]
    last = feed.cursor(page[-1][0] if page else mark)
    return answer(
        msgspec.json.encode(
            EventPage(
                authors.events([e for _, e in page], view.store.local.pushers()),
                last if len(got) > limit else None,
                last,
            )
        )
        + b"\n"
    )


def _mark(feed: Feed, after: str | None) -> int:
    """The arrival number of cursor `after` (0 without one); Invalid for one this journal did
    not give."""
    from service.core.errors import Invalid

    form = cursor_form(after) if after is not None else None
    if form is None:
        return 0
    epoch, seq = form
    if epoch != feed.epoch:
        raise Invalid(
            f"{{after}} {after} is a cursor of another arrival journal (this workspace's was made "
            "again): follow from the start (no `after`) or from the last event id you hold",
            field="after",
        )
    if seq > feed.end():
        raise Invalid(
            f"{{after}} {after}: no event has arrived that far; give a cursor a page gave", field="after"
        )
    return seq


def _by_id(request: AnyRequest, ws: str, slug: str, after: str, limit: int) -> Response[bytes]:
    """The page of events with an id after event id `after`, in id order (the older form)."""
    from service.adapters.store.clock import wall_ms
    from service.adapters.store.segments import read_after
    from service.core.errors import Invalid
    from service.core.events import ids

    if not ids.is_id(after):
        raise Invalid(f"{{after}} {after!r} is neither an event id nor a cursor", field="after")
    if ids.beyond_horizon(after, wall_ms()):
        raise Invalid(
            f"{{after}} {after} is dated ahead of the service's clock: no event follows it", field="after"
        )
    with reading(request, ws, slug) as view:
        log = view.require_project()
        found = read_after(view.live.store.root, log, after)
    page = found[:limit]
    more = page[-1].id if len(found) > limit else None
    return answer(
        msgspec.json.encode(EventPage(authors.events(page, view.store.local.pushers()), more)) + b"\n"
    )


@get(
    "/api/v1/workspaces/{ws:str}/stream",
    **openapi.protected("read"),
    responses=openapi.answers(str, 400, 401, 403, media_type="text/event-stream"),
)
async def stream(request: AnyRequest, ws: str, project: str | None = None) -> ServerSentEvent:
    """Every event arriving from now on (or after `Last-Event-ID`: a cursor, as each event's
    SSE id is), optionally of one project. Ends when the token is revoked."""
    await anyio.to_thread.run_sync(guard.authorize, data_of(request), request, ws, "read")
    return await following(request, ws, project, guard.presented_token)


async def following(
    request: AnyRequest, ws: str, project: str | None, presented: guard.Presented
) -> ServerSentEvent:
    """The stream of workspace `ws` for a caller already authorized to read it with the token
    `presented` reads (this route's header, and the web view's session: `service/server/web/`).
    That token is checked again once a second while the stream is open."""
    import hashlib

    live = await anyio.to_thread.run_sync(hub_of(request).workspace, ws)
    last = request.headers.get("last-event-id")
    counted: Metrics = request.app.state["metrics"]
    data = data_of(request)
    credential = presented(request)
    named = credential if isinstance(credential, str) else f"session {credential.id}"
    key = hashlib.sha256(named.encode("utf-8", "surrogatepass")).digest()

    def still() -> bool:
        return guard.still(data, request, ws, "read", presented)

    messages = _messages(live, last, project, (key, still))
    counting = cast("AsyncGenerator[ServerSentEventMessage, None]", counted.streaming(messages))
    return Paced(counting, closing=(counting, messages))


async def _messages(
    live: LiveWorkspace, last: str | None, project: str | None, credential: tuple[bytes, Callable[[], bool]]
) -> AsyncGenerator[ServerSentEventMessage, None]:
    feed = live.feed
    with feed.waiting() as waiter, feed.watch.holding(*credential, waiter):
        mark = feed.end()
        form = cursor_form(last) if last else None
        if last and form is None:  # an event id (the older form): the events with a greater id
            found = await anyio.to_thread.run_sync(_logged_after, live, last)
            for message in _by_ids(found, project, live.store.local.pushers()):
                yield message
        elif form is not None:  # another journal's cursor: from the start, so none is missed
            mark = form[1] if form[0] == feed.epoch and form[1] <= mark else 0
        while not feed.closed and waiter.ended is None:
            got = feed.since(mark)
            if got is None:  # behind what is kept: the journal and the logs
                got = await anyio.to_thread.run_sync(arrived, feed, live.store.root, None, mark, MOST)
            if waiter.ended is not None:
                return
            relayed = live.store.local.pushers() if got else {}
            chunk, size = [], 0
            for seq, event in got:
                mark = seq
                if project is None or event.project == project:
                    made = feed.rendered(seq, partial(_encoded, event, feed.cursor(seq), relayed))
                    chunk.append(made)
                    size += len(made)
                    if size >= CHUNK:
                        yield Encoded(b"".join(chunk))
                        chunk, size = [], 0
            if chunk:
                yield Encoded(b"".join(chunk))
            if not got:
                await waiter.wait(KEEPALIVE_S)
                if not feed.closed and waiter.ended is None and feed.end() == mark:
                    yield ServerSentEventMessage(comment="keepalive")


def _encoded(event: Event, sse_id: str, relayed: Mapping[str, str]) -> bytes:
    """An event's message as sent: encoded once, whatever the number of streams sending it."""
    return _message(event, sse_id, relayed).encode()


def _message(event: Event, sse_id: str, relayed: Mapping[str, str]) -> ServerSentEventMessage:
    """An event's message: its canonical line (with who pushed it: `app/authors.py`), with
    `sse_id` as the SSE id."""
    return ServerSentEventMessage(authors.line(event, relayed), id=sse_id)


def _by_ids(
    events: list[Event], project: str | None, relayed: Mapping[str, str]
) -> Iterator[ServerSentEventMessage]:
    """The messages of a resume by event id: each its id as the SSE id (a resume from one of
    them reads by id again)."""
    for event in events:
        if project is None or event.project == project:
            yield _message(event, event.id, relayed)


def _logged_after(live: LiveWorkspace, last: str) -> list[Event]:
    """Every event of every log with an id after `last`, in id order."""
    from service.adapters.store.segments import read_after

    found = [e for log in live.store.logs() for e in read_after(live.store.root, log, last)]
    return sorted(found, key=lambda e: e.id)


ROUTES = [events_after, stream]
