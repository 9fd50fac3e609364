"""Fetches and clones: git's own `git http-backend` (as a CGI program) answers
`info/refs?service=git-upload-pack` and `git-upload-pack` for the workspace's store. A fetch
only reads, so C git's server is safe here, and it sends the deltas of the store's packs
(protocol v0 and v2, gzip'd requests, shallow and partial clones: the blob and tree filters,
the objects left out fetched by id later). It never answers a push: receive-pack is this
endpoint's own (`receiving.py`), and http.receivepack is off for it besides."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from service.server.endpoint import gitprog
from service.server.endpoint.errors import EndpointError

_PROTOCOL = re.compile(r"version=[0-9](:[A-Za-z0-9=._-]+)*")
_SETTINGS = {
    "http.receivepack": "false",
    "http.getanyfile": "false",
    "safe.directory": "*",
    "uploadpack.hideRefs": "refs/selfhub",  # commits an outside write left aside: never advertised
    "uploadpack.allowFilter": "true",
    "uploadpack.allowReachableSHA1InWant": "true",  # a v0 partial clone fetches what it left out
    "uploadpackfilter.allow": "false",
    "uploadpackfilter.blob:none.allow": "true",
    "uploadpackfilter.blob:limit.allow": "true",
    "uploadpackfilter.tree.allow": "true",
}
MAX_HEADERS = 16 * 1024


@dataclass
class Answer:
    status: int = 200
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)


@dataclass
class Asked:
    """What of the HTTP request the CGI program gets."""

    method: str
    path: str  # under the project root: /WS/info/refs, /WS/git-upload-pack
    query: str
    content_type: str = ""
    content_encoding: str = ""
    protocol: str = ""  # the Git-Protocol header
    client: str = ""


Send = Callable[[Answer], Awaitable[None]]
_ADVERTISED: dict[str, tuple[Answer, bytes]] = {}  # Git-Protocol → v2's advertisement


def v2(asked: Asked) -> bool:
    """Whether the client speaks protocol v2 (its Git-Protocol header says so)."""
    return _PROTOCOL.fullmatch(asked.protocol) is not None and "version=2" in asked.protocol.split(":")


async def advertise(root: Path, asked: Asked, start: Send) -> AsyncIterator[bytes]:
    """`info/refs?service=git-upload-pack` for a v2 client: the capabilities, which name no
    ref, so git's answer is asked once and kept (a v0 client's lists the refs: `serve`)."""
    kept = _ADVERTISED.get(asked.protocol)
    if kept is None:
        said = b""
        got: list[Answer] = []

        async def keep(answer: Answer) -> None:
            got.append(answer)

        async for chunk in serve(root, asked, _nothing(), keep):
            said += chunk
        kept = (got[0], said)
        if got[0].status == 200:
            _ADVERTISED[asked.protocol] = kept
    await start(kept[0])
    yield kept[1]


async def _nothing() -> AsyncIterator[bytes]:
    return
    yield b""


async def serve(root: Path, asked: Asked, body: AsyncIterator[bytes], start: Send) -> AsyncIterator[bytes]:
    """Run `git http-backend` for `asked` on the stores under `root`: `start` gets its status
    and headers, then its body is yielded as it comes."""
    env = gitprog.environment(
        _SETTINGS,
        GIT_PROJECT_ROOT=str(root),
        GIT_HTTP_EXPORT_ALL="1",
        REQUEST_METHOD=asked.method,
        PATH_INFO=asked.path,
        QUERY_STRING=asked.query,
        CONTENT_TYPE=asked.content_type,
        REMOTE_ADDR=asked.client,
    )
    if asked.content_encoding:
        env["HTTP_CONTENT_ENCODING"] = asked.content_encoding
    if _PROTOCOL.fullmatch(asked.protocol):
        env["GIT_PROTOCOL"] = asked.protocol
    proc = await asyncio.create_subprocess_exec(
        gitprog.program(),
        "http-backend",
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    feeding = asyncio.create_task(_feed(proc.stdin, body))
    try:
        answer, rest = await _headers(proc.stdout)
        await start(answer)
        if rest:
            yield rest
        while chunk := await proc.stdout.read(65536):
            yield chunk
        with contextlib.suppress(EndpointError):  # the client hung up after the answer: no matter
            await feeding
    finally:
        if proc.returncode is None:
            proc.kill()
        feeding.cancel()
        await proc.wait()


async def _feed(stdin: asyncio.StreamWriter, body: AsyncIterator[bytes]) -> None:
    """The request body to the program, until its end or until the program stops reading
    (an upload-pack that has what it needs: the rest of the body is not wanted)."""
    try:
        async for chunk in body:
            if stdin.is_closing():
                return
            stdin.write(chunk)
            await stdin.drain()
    except (OSError, RuntimeError):  # a closed pipe: BrokenPipeError, or uvloop's RuntimeError
        return
    finally:
        stdin.close()


async def _headers(stdout: asyncio.StreamReader) -> tuple[Answer, bytes]:
    """The CGI headers (`Status:` and the rest) and what of the body came with them."""
    held = b""
    while b"\r\n\r\n" not in held and b"\n\n" not in held:
        chunk = await stdout.read(4096)
        if not chunk:
            return _failed(b"git http-backend gave no answer\n")
        held += chunk
        if len(held) > MAX_HEADERS:
            return _failed(b"git http-backend's headers were too long\n")
    cut = held.find(b"\r\n\r\n")
    head, rest = (held[:cut], held[cut + 4 :]) if cut >= 0 else held.split(b"\n\n", 1)
    answer = Answer()
    for raw in head.splitlines():
        name, _, value = raw.partition(b":")
        name, value = name.strip().lower(), value.strip()
        if name == b"status":
            answer.status = int(value.split(b" ", 1)[0] or b"500")
        elif name:
            answer.headers.append((name, value))
    return answer, rest


def _failed(why: bytes) -> tuple[Answer, bytes]:
    return Answer(502, [(b"content-type", b"text/plain")]), why
