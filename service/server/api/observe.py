"""What wraps every HTTP request, routed or not (`app.build` puts it around litestar's own
handler, outside the router, so a 404 is seen too): its request id (the client's
`X-Request-Id` when sane, else a new one, sent back in the answer's header), the time limit
of its answer, its log line and its metrics.

The probes' lines (`/healthz`, `/readyz`, `/metrics` answered 200, and `/readyz`'s 503 while
the workspaces load) are at debug: a Docker healthcheck alone asks 8,640 times a day. A git
endpoint request's line names its route as the others do (`/git/{ws}.git/info/refs`).

The time limit runs until the answer starts: a handler that has not started answering within
`limits.request_s` gets a 503 problem at once, whether it is awaiting or in a worker thread
(the thread finishes on its own; what it answers is dropped). A stream, once started, runs
as long as it likes. It needs asyncio's loop (uvicorn's and granian's).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec
from litestar.enums import ScopeType

from service.core.commands.commands import SLUG
from service.server.api import git, logs
from service.server.api.errors import PROBLEM_JSON, ApiError
from service.server.api.guard import GRANT

if TYPE_CHECKING:
    from litestar.types import ASGIApp, HTTPScope, Message, Receive, Scope, Send

    from service.adapters.auth.tokens import Grant
    from service.server.api.metrics import Metrics

REQUEST_ID = b"x-request-id"
PROBES = frozenset({"/healthz", "/readyz", "/metrics"})


class TimedOut(ApiError):
    code = "timeout"

    def __init__(self, limit: float) -> None:
        super().__init__(
            f"no answer within {limit:g} s; a command may still have been applied,"
            " so read before sending it again"
        )


class Exchange:
    """One request's answer as it goes out: its status, whether it started or expired, and
    `ended` called once, as soon as its last byte is sent (or the request is over without)."""

    def __init__(self, send: Send, request_id: str, ended: Callable[[Exchange], None]) -> None:
        self.raw, self.request_id, self.ended = send, request_id, ended
        self.status: int | None = None
        self.started = self.expired = self.over = False

    async def send(self, message: Message) -> None:
        """The app's send: dropped once the request expired."""
        if not self.expired:
            await self._emit(message)

    async def expire(self, error: ApiError) -> None:
        """Answer `error` (the app's later messages are dropped since `expired` was set)."""
        body = msgspec.json.encode(error.document())
        headers = [(b"content-type", PROBLEM_JSON.encode()), (b"content-length", str(len(body)).encode())]
        headers += [(k.lower().encode(), v.encode()) for k, v in error.headers().items()]
        await self._emit({"type": "http.response.start", "status": error.status, "headers": headers})
        await self._emit({"type": "http.response.body", "body": body, "more_body": False})

    async def _emit(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status, self.started = message["status"], True
            headers = [*message.get("headers", ()), (REQUEST_ID, self.request_id.encode())]
            message = {**message, "headers": headers}
        await self.raw(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self.end()

    def end(self) -> None:
        if not self.over:
            self.over = True
            self.ended(self)


class Observe:
    """The ASGI wrapper: request id, time limit (seconds; 0 for none), log line, metrics."""

    def __init__(self, app: ASGIApp, metrics: Metrics, log: Any, limit: float) -> None:
        self.app, self.metrics, self.log, self.limit = app, metrics, log, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()

        def ended(exchange: Exchange) -> None:
            self._record(scope, exchange, time.perf_counter() - began)

        exchange = Exchange(send, logs.request_id(_header(scope, REQUEST_ID)), ended)
        bound = logs.REQUEST.set(exchange.request_id)
        try:
            await self._answer(scope, receive, exchange)
        finally:
            logs.REQUEST.reset(bound)
            exchange.end()  # a client gone, a failure outside litestar: logged all the same

    async def _answer(self, scope: Scope, receive: Receive, exchange: Exchange) -> None:
        """The app's answer, or a 503 when it has not started within the limit: a timer sends
        the 503 from a task of its own (the request's task may be waiting on a thread, which
        no cancellation stops), then cancels the request's task. A timer, not a task group
        racing the app: that costs some 50 µs more a request."""
        if self.limit <= 0:
            await self.app(scope, receive, exchange.send)
            return
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None
        answered: list[asyncio.Task[None]] = []

        def expire() -> None:
            if not exchange.started and not exchange.over:
                exchange.expired = True
                answered.append(loop.create_task(exchange.expire(TimedOut(self.limit))))
                task.cancel()

        timer = loop.call_later(self.limit, expire)
        try:
            await self.app(scope, receive, exchange.send)
        except asyncio.CancelledError:
            if not answered:
                raise
        finally:
            timer.cancel()
            if answered:
                task.uncancel()  # the timer's cancellation: the 503 is the answer
                await answered[0]

    def _record(self, scope: HTTPScope, exchange: Exchange, seconds: float) -> None:
        route, named = _route(scope)
        status = exchange.status or 500  # nothing was sent: the app failed outside litestar
        self.metrics.request(route, scope["method"], status, seconds)
        given: Grant | None = scope.get("state", {}).get(GRANT)
        getattr(self.log, _level(route, status))(
            "request",
            request_id=exchange.request_id,
            workspace=named or _workspace(scope, given),
            user=given.user if given is not None else None,
            route=route,
            method=scope["method"],
            status=status,
            duration_ms=round(seconds * 1000, 3),
        )


def _route(scope: HTTPScope) -> tuple[str | None, str | None]:
    """The request's route template, and the workspace a git endpoint path names."""
    template: str | None = scope.get("path_template") or None
    # a mount's path is rewritten to the part under it: the path as sent is the raw one
    path = bytes(scope.get("raw_path") or b"").decode("latin-1").partition("?")[0]
    if template is not None or not path.startswith("/git/"):
        return template, None
    found = git.route_of(path)
    if found is None:
        return None, None
    return found[0], found[1] if SLUG.fullmatch(found[1]) else None


def _level(route: str | None, status: int) -> str:
    """debug for a probe's answer, error for a failure, else info."""
    if route in PROBES and (status == 200 or (route == "/readyz" and status == 503)):
        return "debug"
    return "error" if status >= 500 else "info"


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _workspace(scope: HTTPScope, given: Grant | None) -> str | None:
    """The workspace the route names, when it is a valid name (else none); for a route that
    names none, the token's."""
    params = scope.get("path_params", {}) if scope.get("path_template") else {}
    if "ws" in params:
        name = params["ws"]
        return name if isinstance(name, str) and SLUG.fullmatch(name) else None
    return given.workspace if given is not None else None
