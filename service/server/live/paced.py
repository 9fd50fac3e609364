"""A stream's sends, paced by its client: one that does not read is dropped, one that left
costs nothing more.

uvicorn's `send` waits while the connection's write buffer is full (its flow control), so a
client that never reads holds its stream in a send: the service's memory for it stays bounded
(the transport's buffer), but the stream never ends. A send that waits `STUCK_S` is given up:
the connection is cut (`ABORT`, set by `connections.Bounded`; elsewhere the response just
ends) and the client, once it reads again, reconnects and resumes with `Last-Event-ID`.

Once the client has left, uvicorn's `send` returns at once without yielding to the loop, so
a stream would render and "send" everything it has not sent yet before its cancellation is
delivered: with hundreds of subscribers leaving at once that held the loop for seconds. Here
the first send after the disconnect ends the stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import anyio
from litestar.response import ServerSentEvent, ServerSentEventMessage

from service.server.live.errors import LiveError

if TYPE_CHECKING:
    from litestar.response.base import ASGIResponse
    from litestar.types import Message, Receive, ReceiveMessage, Scope, Send

STUCK_S = 5.0  # a send waiting this long on a full buffer: the client does not read
CHECK_S = 1.0  # how often a stream's send under way is checked
ABORT = "selfhub.abort"  # the scope extension that cuts the connection at once

Closing = AsyncGenerator[Any, None]


class Dropped(LiveError):
    """The stream ends here: its client left, or does not read."""


class Encoded(ServerSentEventMessage):
    """Messages already encoded (`ServerSentEventMessage.encode`), sent as they are."""

    def __init__(self, raw: bytes) -> None:
        super().__init__()
        self.raw = raw

    def encode(self) -> bytes:
        return self.raw


class Paced(ServerSentEvent):
    """A ServerSentEvent sent by `Sender`; `closing` (the generators behind `content`) are
    closed once it ends, however it ends, so their `finally` runs then, not at collection."""

    def __init__(self, content: AsyncIterator[ServerSentEventMessage], closing: Sequence[Closing]) -> None:
        super().__init__(content)
        self.closing = closing

    def to_asgi_response(self, *args: Any, **kwargs: Any) -> ASGIResponse:
        made = super().to_asgi_response(*args, **kwargs)
        return cast("ASGIResponse", Sender(made, self.closing))


class Sender:
    """Runs `inner` with a `send` that ends the stream once the client left or stops reading.

    A send is timed by a check once a second rather than a timer of its own: a cancel scope
    with a deadline costs some 15 µs a send, which hundreds of streams pay for every event."""

    def __init__(self, inner: ASGIResponse, closing: Sequence[Closing], stuck_s: float = STUCK_S) -> None:
        self.inner, self.closing, self.stuck_s = inner, closing, stuck_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        loop = asyncio.get_running_loop()
        left = stuck = False
        since: float | None = None  # when the send under way began
        task = asyncio.current_task()
        timer: asyncio.TimerHandle | None = None

        async def receiving() -> ReceiveMessage:
            nonlocal left
            message = await receive()
            left = left or message["type"] == "http.disconnect"
            return message

        async def sending(message: Message) -> None:
            nonlocal since, task
            if left:
                raise Dropped("left")
            task, since = asyncio.current_task(), loop.time()
            try:
                await send(message)
            except asyncio.CancelledError:
                if not stuck or task is None:
                    raise
                task.uncancel()  # the check's cancellation: it ends this stream, not the request
                raise Dropped("stuck") from None
            finally:
                since = None
            if left:
                raise Dropped("left")

        def check() -> None:
            nonlocal stuck, timer
            if since is not None and task is not None and loop.time() - since >= self.stuck_s:
                stuck = True
                task.cancel()
            else:
                timer = loop.call_later(CHECK_S, check)

        timer = loop.call_later(CHECK_S, check)
        try:
            await self.inner(scope, receiving, sending)
        except* Dropped:
            pass
        finally:
            if timer is not None:
                timer.cancel()
            for generator in self.closing:
                await generator.aclose()
        if stuck and not left:
            await _cut(scope, receive)


async def _cut(scope: Scope, receive: Receive) -> None:
    """Cut the connection, and wait (a second at most) for the server to see it gone, so it
    does not take the unfinished answer for a fault."""
    abort = cast("Callable[[], None] | None", (scope.get("extensions") or {}).get(ABORT))
    if abort is None:
        return
    abort()
    with anyio.move_on_after(1.0):
        while (await receive())["type"] != "http.disconnect":
            pass
