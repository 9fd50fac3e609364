"""The write routes: events posted as they are (`POST …/events`) and command values
(`POST …/commands`). Each authorizes, decodes the body, and hands the workspace's writer
(`service/server/live/writer.py`) one job: a call of the application layer (`service.app.post`,
`service.app.execute`, as the CLI makes) on a view whose transactions are the writer's batch.
It answers once the batch's commit is durable (with `--replicated`, once the workspace's
backend holds it too: `server/mirror/replicated.py`), naming that commit (`Selfhub-Commit`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import anyio.to_thread
import msgspec
from litestar import Response, post

from service.core.commands.requests import AnyCommand
from service.core.events.posted import Posted, PostEvents
from service.server.api import bodies, fresh, guard, openapi, reads
from service.server.api.routes import JSON, AnyRequest, answer, data_of, hub_of, origin_of

if TYPE_CHECKING:

    from service.adapters.store.unit import Unit as Batch
    from service.core.events.events import Origin
    from service.server.live.jobs import Job
    from service.server.live.space import LiveWorkspace

WRITE_TIMEOUT_S = 30.0


@post(
    "/api/v1/workspaces/{ws:str}/events",
    status_code=201,
    **openapi.protected("command"),
    responses=openapi.answers(Posted, *openapi.COMMAND_ERRORS, 504, status=201),
    operation_class=openapi.operation(body=PostEvents),
)
async def post_events(request: AnyRequest, ws: str) -> Response[bytes]:
    """Append events as given (`type`, `project`, `payload`, `refs`?, `id`?): the service gives
    the id (unless given), the time and `origin.by`; 201 with the ids and the commit, 200 when
    every id given was written before with the same content (a retry)."""
    from service.app import post
    from service.core.events import posted
    from service.server.live.view import View

    given = guard.authorize(data_of(request), request, ws, "command")  # checked by the route's guard
    body = await request.body()  # over the app's body cap: a 413 problem
    origin = origin_of(given.user, request.headers.get("x-selfhub-actor", "human"))
    events = posted.decode(body)
    live = await _live(request, ws)
    run = lambda batch: post(View(live, None, origin, batch), events)  # noqa: E731
    with _pushed_later(request, ws):
        job = await live.writer.submit_async(run, WRITE_TIMEOUT_S, client=_client(request))
    result = job.answer()
    assert isinstance(result, posted.Posted)
    done = msgspec.structs.replace(result, commit=job.commit or live.head)
    body = msgspec.json.encode(done) + b"\n"
    return _committed(answer(body, JSON, 200 if done.replayed else 201), done.commit)


@post(
    "/api/v1/workspaces/{ws:str}/commands",
    status_code=201,
    **openapi.protected("command"),
    responses=openapi.answers(bodies.Written, *openapi.COMMAND_ERRORS, 504, status=201),
    operation_class=openapi.operation(body=AnyCommand),
)
async def commands(request: AnyRequest, ws: str, project: str | None = None) -> Response[bytes]:
    """Run one command value (`service.core.commands.requests`) as the token's user; `project` is the
    project a new record goes to (the CLI's `--project`)."""
    from service.core.commands.requests import decode

    given = guard.authorize(data_of(request), request, ws, "command")  # checked by the route's guard
    body = await request.body()
    origin = origin_of(given.user, request.headers.get("x-selfhub-actor", "human"))
    job = await run_command(request, ws, project, origin, decode(body))
    return _committed(answer(reads.written(list(job.events)), status=201), job.commit)


async def run_command(
    request: AnyRequest,
    ws: str,
    project: str | None,
    origin: Origin,
    command: AnyCommand,
) -> Job:
    """Run `command` as `origin` on the workspace's writer (`service.app.execute`) and wait for
    its commit: the job, answered, with its events and the commit that holds them. The one way a
    front end of the service runs a command (`POST …/commands`, the web view's forms)."""
    from service.app import execute
    from service.server.live.view import View

    live = await _live(request, ws)

    def run(batch: Batch) -> object:
        return execute(View(live, project, origin, batch), command)

    with _pushed_later(request, ws):
        job = await live.writer.submit_async(run, WRITE_TIMEOUT_S, client=_client(request))
    job.answer()
    return job


def _committed(response: Response[bytes], commit: str | None) -> Response[bytes]:
    """A write's answer naming the commit that holds it (`Selfhub-Commit`: `api/fresh.py`)."""
    if commit is not None:
        response.headers[fresh.COMMIT] = commit
    return response


def _client(request: AnyRequest) -> tuple[str, int] | None:
    """The connection that posted, for the writer to tell who posts in a loop."""
    return (request.client.host, request.client.port) if request.client else None


@contextmanager
def _pushed_later(request: AnyRequest, ws: str) -> Iterator[None]:
    """Once the writer answered (whatever it answered): a remote-backed workspace pushes what
    it holds to its backend next (one sync in flight per workspace: writes meanwhile make one
    more round). With `--replicated` the answer came after the push, unless it failed: then
    the round pushes the batch the client was told is not acknowledged."""
    try:
        yield
    finally:
        request.app.state["mirrors"].wrote(ws)


async def _live(request: AnyRequest, ws: str) -> LiveWorkspace:
    """The live workspace, opened in a worker thread the first time (it folds the logs)."""
    hub = hub_of(request)
    held = hub.held(ws)
    return held if held is not None else await anyio.to_thread.run_sync(hub.workspace, ws)


ROUTES = [post_events, commands]
