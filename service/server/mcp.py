"""`/mcp`: the tool table (`service/app/tools.py`) over the Model Context Protocol's streamable
HTTP transport (the official SDK, stateless: every request stands alone), with the API's tokens.

Every request is let in by the route guard (`api/guard.py`): no token, or one that no longer
opens its workspace, is a 401 or 403 problem before the SDK sees the body. A token opens one
workspace; its tools answer on that one. Each tool call is authorized again for the tool's
action, so a reader's write is the tool's error naming the role it takes, and nothing is
written. Reads run on a held view of the live states, writes as one job of the workspace's
writer, as the API's do (`api/routes.py`, `api/writes.py`): a write's answer names the commit
that holds it (`Selfhub-Commit`) and a request naming one (`Selfhub-Min-Commit`) is answered
from states that include it (`api/fresh.py`).

The SDK takes seconds to import: its server is made at the first request, and runs until the
app stops (`Mcp.lifespan`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import msgspec
from litestar import asgi
from litestar.connection import ASGIConnection
from litestar.enums import ScopeType

from service.server.api import fresh, guard
from service.server.api.errors import PROBLEM_JSON, ApiError, masked

if TYPE_CHECKING:
    from anyio.abc import TaskGroup, TaskStatus
    from litestar import Litestar
    from litestar.types import Receive, Scope, Send
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from service.adapters.auth.tokens import Grant
    from service.app.mcpserver import Answered
    from service.app.tools import Call
    from service.server.live.space import LiveWorkspace

    Connection = ASGIConnection[Any, Any, Any, Any]

CALLER = "selfhub.caller"  # the key of the request's scope that holds its connection
COMMIT = "selfhub.commit"  # ... and the commit that holds a call's write
WRITE_TIMEOUT_S = 30.0


class Mcp:
    """The SDK's session manager, made at the first request and run in the app's lifespan."""

    def __init__(self) -> None:
        self._manager: StreamableHTTPSessionManager | None = None
        self._group: TaskGroup | None = None
        self._lock: anyio.Lock | None = None

    @asynccontextmanager
    async def lifespan(self, app: Litestar) -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            self._group, self._lock = group, anyio.Lock()
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    async def manager(self) -> StreamableHTTPSessionManager:
        assert self._lock is not None and self._group is not None, "the app's lifespan has not started"
        async with self._lock:
            if self._manager is None:
                made = await anyio.to_thread.run_sync(_manager)
                await self._group.start(_run, made)
                self._manager = made
        return self._manager


def _manager() -> StreamableHTTPSessionManager:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from service.app.mcpserver import server

    _quiet()
    return StreamableHTTPSessionManager(app=server(_answer), json_response=True, stateless=True)


def _quiet() -> None:
    """The SDK's log records as the service's own lines (through uvicorn's structured handler,
    `api/logs.py: uvicorn_config`), warnings and errors only: it says a line a request."""
    import logging

    sdk = logging.getLogger("mcp")
    sdk.setLevel(logging.WARNING)
    handlers = logging.getLogger("uvicorn.error").handlers
    if handlers:
        sdk.handlers, sdk.propagate = list(handlers), False


async def _run(manager: StreamableHTTPSessionManager, *, task_status: TaskStatus[None]) -> None:
    async with manager.run():
        task_status.started()
        await anyio.sleep_forever()


@asgi("/mcp", is_mount=True, copy_scope=True)
async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != ScopeType.HTTP:
        return
    connection: Connection = ASGIConnection(scope, receive, send)
    try:
        given = await anyio.to_thread.run_sync(_admit, connection)
        commit = fresh.wanted(connection.headers.get(fresh.MIN_COMMIT))
        if commit is not None:
            await fresh.at_least(connection, given.workspace, commit)
    except ApiError as exc:
        return await _problem(send, exc)
    scope[CALLER] = connection  # type: ignore[literal-required]  # read back by `_answer`
    holder: Mcp = scope["app"].state["mcp"]
    manager = await holder.manager()
    await manager.handle_request(scope, receive, _naming_commit(scope, send))  # type: ignore[arg-type]


def _naming_commit(scope: Scope, send: Send) -> Send:
    """`send` with the answer of a call that wrote naming the commit that holds the write
    (`Selfhub-Commit`, set by `_write` in the scope): the answer starts once the call is done."""

    async def sending(message: Any) -> None:
        commit = scope.get(COMMIT)
        if message["type"] == "http.response.start" and commit:
            headers = [*message.get("headers", []), (fresh.COMMIT.lower().encode(), str(commit).encode())]
            message = {**message, "headers": headers}
        await send(message)

    return sending


def _admit(connection: Connection) -> Grant:
    """The token's grant, once it may read its own workspace."""
    data = connection.app.state["data"]
    given = guard.grant(data, connection)
    return guard.authorize(data, connection, given.workspace, "read")


async def _answer(call: Call, ctx: Any) -> Answered:
    """A tool call of the request in `ctx`, on its token's workspace once its role may."""
    from service.server.api.routes import origin_of

    connection: Connection = ctx.request.scope[CALLER]
    data = connection.app.state["data"]
    ws = guard.grant(data, connection).workspace
    given = await anyio.to_thread.run_sync(guard.authorize, data, connection, ws, call.tool.action)
    origin = origin_of(given.user, connection.headers.get("x-selfhub-actor", "agent"))
    live = await _live(connection, ws)
    from service.app.mcpserver import Answered

    if call.tool.action == "read":
        return Answered(await anyio.to_thread.run_sync(_read, live, call, origin))
    return Answered(await _write(connection, live, call, origin))


def _read(live: LiveWorkspace, call: Call, origin: Any) -> str:
    from service.app import tools
    from service.server.live import view

    with view.reading(live, call.project, origin) as held:
        return tools.answer(held, call, local=False)


async def _write(connection: Connection, live: LiveWorkspace, call: Call, origin: Any) -> str:
    from service.app import tools
    from service.server.live.view import View

    client = (connection.client.host, connection.client.port) if connection.client else None
    job = await live.writer.submit_async(
        lambda batch: tools.answer(View(live, call.project, origin, batch), call, local=False),
        WRITE_TIMEOUT_S,
        client=client,
    )
    try:
        text = job.answer()
    finally:
        connection.app.state["mirrors"].wrote(live.name)  # a remote-backed workspace pushes it next
    connection.scope[COMMIT] = job.commit  # type: ignore[literal-required]  # `_naming_commit`
    assert isinstance(text, str)
    return text


async def _live(connection: Connection, ws: str) -> LiveWorkspace:
    hub = connection.app.state["hub"]
    held: LiveWorkspace | None = hub.held(ws)
    return held if held is not None else await anyio.to_thread.run_sync(hub.workspace, ws)


async def _problem(send: Send, exc: ApiError) -> None:
    """The API's problem document for a request refused before the SDK saw it."""
    body = msgspec.json.encode(masked(exc.document()))
    extra = {"www-authenticate": 'Bearer realm="selfhub"'} if exc.status == 401 else {}
    headers = [
        (b"content-type", PROBLEM_JSON.encode()),
        (b"content-length", str(len(body)).encode()),
        *((k.encode(), v.encode()) for k, v in (exc.headers() | extra).items()),
    ]
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


ROUTES = [mcp_endpoint]
