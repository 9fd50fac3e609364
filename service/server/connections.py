"""The connections the service holds open, bounded: uvicorn's httptools protocol with a time
for a request's headers and caps on open connections (`limits` of the configuration).

uvicorn closes an idle keep-alive connection, but not one that never finishes its headers:
thousands of those once held every file descriptor the process had. So a connection's
headers must arrive within `header_s` of its opening (and of each request's first byte on a
kept-alive one), else it is closed. A connection past `connections_per_client` open from
its address, or past `connections` in all, is answered 503 with a `Retry-After` once it
sends, and closed. uvicorn's own `limit_concurrency` counts requests, not connections, and
its 503 comes only once the headers are in. Behind a proxy every connection comes from the
proxy's address: raise `connections_per_client` or set it to 0 (no cap)."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections import Counter
from typing import TYPE_CHECKING, Any

import msgspec
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

if TYPE_CHECKING:
    from service.server.api.config import Limits

RETRY_AFTER_S = 1
_DETAIL = "the service holds as many connections as it takes{whose}; retry in a second"


def refusal(whose: str) -> bytes:
    """The whole 503 answer (a problem document) a connection past a cap gets."""
    body = msgspec.json.encode(
        {
            "type": "about:blank",
            "title": "Service Unavailable",
            "status": 503,
            "detail": _DETAIL.format(whose=whose),
        }
    )
    head = (
        "HTTP/1.1 503 Service Unavailable\r\n"
        "content-type: application/problem+json\r\n"
        f"content-length: {len(body)}\r\n"
        f"retry-after: {RETRY_AFTER_S}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class Open:
    """The connections open now, in all and by client address (the event loop's thread only)."""

    def __init__(self, total: int, per_client: int) -> None:
        self.total, self.per_client = total, per_client
        self.count = 0
        self.by_client: Counter[str] = Counter()

    def add(self, client: str) -> str | None:
        """Count a connection from `client`; why it is past a cap (None: it is not)."""
        self.count += 1
        self.by_client[client] += 1
        if self.per_client and self.by_client[client] > self.per_client:
            return " from one address"
        if self.total and self.count > self.total:
            return ""
        return None

    def remove(self, client: str) -> None:
        self.count -= 1
        self.by_client[client] -= 1
        if self.by_client[client] <= 0:
            del self.by_client[client]


class Bounded(HttpToolsProtocol):
    """HttpToolsProtocol with the header time and the caps of `protocol`'s class."""

    header_s: float = 0.0
    held: Open = Open(0, 0)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._peer: str | None = None
        self._refused: str | None = None
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._peer = self.client[0] if self.client else "-"
        self._refused = self.held.add(self._peer)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._peer is not None:
            self.held.remove(self._peer)
            self._peer = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused is not None:
            if not self.transport.is_closing():
                self.transport.write(refusal(self._refused))
                self.transport.close()
            return
        super().data_received(data)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()  # a kept-alive connection's next request: its headers are timed too

    def on_headers_complete(self) -> None:
        self._disarm()
        # a stream whose client does not read cuts its connection (`live/paced.py`)
        extensions: Any = self.scope.setdefault("extensions", {})
        extensions["selfhub.abort"] = self._cut
        super().on_headers_complete()

    def _cut(self) -> None:
        """Close at once with a reset: what is left unsent is dropped, not kept by the kernel."""
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.transport.abort()

    def _arm(self) -> None:
        if self.header_s > 0 and self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_s, self._too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()


def protocol(limits: Limits) -> type[Bounded]:
    """The protocol class for one server (`uvicorn.Config(http=…)`): its own count of the
    connections open."""
    return type(
        "BoundedHttp",
        (Bounded,),
        {"header_s": limits.header_s, "held": Open(limits.connections, limits.connections_per_client)},
    )
