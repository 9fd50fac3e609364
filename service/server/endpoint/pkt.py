"""git's pkt-lines: four hex digits of length (the digits included), then the data; `0000`
is a flush. Read from a request body as it arrives, bounded."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from service.server.endpoint.errors import BadRequest

FLUSH = b"0000"
MAX_DATA = 65516  # the most one pkt-line carries
BAND_DATA, BAND_MESSAGE = 1, 2
SIDEBAND_DATA = 65515  # side-band-64k: the data of one packet after its band byte


def line(data: bytes) -> bytes:
    if len(data) > MAX_DATA:
        raise ValueError("a pkt-line carries at most 65516 bytes")
    return b"%04x" % (len(data) + 4) + data


def band(number: int, data: bytes) -> bytes:
    """`data` on side band `number`, cut into packets."""
    return b"".join(
        line(bytes([number]) + data[at : at + SIDEBAND_DATA]) for at in range(0, len(data), SIDEBAND_DATA)
    )


Chunks = Callable[[], Awaitable[bytes | None]]  # the next chunk of a body; None at its end


class Body:
    """A request body read as pkt-lines, then as the raw bytes after them."""

    def __init__(self, next_chunk: Chunks) -> None:
        self._next = next_chunk
        self._buffer = bytearray()
        self._ended = False

    async def _fill(self, size: int) -> bool:
        while len(self._buffer) < size and not self._ended:
            chunk = await self._next()
            if chunk is None:
                self._ended = True
            else:
                self._buffer += chunk
        return len(self._buffer) >= size

    async def pkt(self) -> bytes | None:
        """The next pkt-line's data; None for a flush. BadRequest at the end of the body or
        on a length that is not four hex digits."""
        if not await self._fill(4):
            raise BadRequest("the request ended inside its commands")
        head = bytes(self._buffer[:4])
        try:
            size = int(head, 16)
        except ValueError:
            raise BadRequest(f"{head!r} is not a pkt-line length") from None
        if size == 0:
            del self._buffer[:4]
            return None
        if size < 4:
            raise BadRequest(f"pkt-line length {size} is not one git sends")
        if not await self._fill(size):
            raise BadRequest("the request ended inside a pkt-line")
        data = bytes(self._buffer[4:size])
        del self._buffer[:size]
        return data

    async def rest(self) -> AsyncIterator[bytes]:
        """Every byte not read yet, as it arrives."""
        if self._buffer:
            held, self._buffer = bytes(self._buffer), bytearray()
            yield held
        while not self._ended:
            chunk = await self._next()
            if chunk is None:
                self._ended = True
            elif chunk:
                yield chunk

    async def empty(self) -> bool:
        """Whether nothing follows what was read."""
        return not await self._fill(1)
