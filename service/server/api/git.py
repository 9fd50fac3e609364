"""`/git/WS.git`: each workspace's store over git's smart HTTP protocol, for `self sync`,
`self clone` and plain git, with the API's tokens (HTTP basic auth, any user name, the token
as the password; or a bearer token). Readers fetch; writers push.

Fetches are C git's own (`service/server/endpoint/upload.py`). A push is this endpoint's: its
commands are read, its pack indexed into a quarantine, and main moved by the workspace's
writer thread once the push gate passed it (`service/server/endpoint/land.py`). The answer starts
as soon as the commands are read, so a large pack is not cut by the request time limit.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from litestar import asgi
from litestar.connection import ASGIConnection
from litestar.enums import ScopeType

from service.adapters.auth.tokens import Grant
from service.core.commands.team import Action
from service.server.api import guard
from service.server.api.errors import ApiError
from service.server.endpoint import incoming, lsrefs, pkt, receiving, upload
from service.server.endpoint.errors import BadRequest, EndpointError
from service.server.endpoint.land import land
from service.server.live.errors import WriteTimeout

if TYPE_CHECKING:
    from litestar.types import HTTPScope, Receive, Scope, Send

    from service.server.live.hub import Hub
    from service.server.live.space import LiveWorkspace

_PATH = re.compile(r"/(?P<ws>[^/]+?)(?:\.git)?/(?P<rest>info/refs|git-upload-pack|git-receive-pack)")
_SERVICES: dict[str, Action] = {"git-upload-pack": "read", "git-receive-pack": "append"}
PUSH_TIMEOUT_S = 600.0
_NO_CACHE = [(b"cache-control", b"no-cache, max-age=0, must-revalidate"), (b"pragma", b"no-cache")]


class ClientGone(EndpointError):
    pass


@asgi("/git", is_mount=True, copy_scope=True)
async def git_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == ScopeType.HTTP:
        await _serve(scope, receive, send)


async def _serve(scope: HTTPScope, receive_: Receive, send: Send) -> None:
    path = scope["path"].removeprefix("/git").rstrip("/")  # litestar hands a mount the path under it
    found = _PATH.fullmatch(path)
    query = scope.get("query_string", b"").decode("latin-1")
    service = _service(found["rest"] if found else "", query, scope["method"])
    if found is None or service is None:
        return await _text(send, 404, "not found: only git's smart HTTP protocol is served here\n")
    ws = found["ws"]
    try:
        connection = ASGIConnection[Any, Any, Any, Any](scope, receive_, send)
        pusher = await anyio.to_thread.run_sync(_authorize, connection, ws, _SERVICES[service])
    except ApiError as exc:
        extra = [(b"www-authenticate", b'Basic realm="selfhub"')] if exc.status == 401 else []
        return await _text(send, exc.status, f"{exc.detail}\n", extra)
    if service == "git-upload-pack":
        return await _upload(scope, receive_, send, ws, found["rest"], query)
    live = await _live(scope, ws)
    if found["rest"] == "info/refs":
        body = receiving.advertisement(live.store.head())
        return await _bytes(send, 200, body, "application/x-git-receive-pack-advertisement")
    await _receive_pack(scope, receive_, send, live, pusher)


def route_of(path: str) -> tuple[str, str] | None:
    """The route template of a request's path to this endpoint, and the workspace it names
    (a mount has no template of litestar's: the log line and the metrics take this one)."""
    found = _PATH.fullmatch(path.removeprefix("/git").rstrip("/"))
    return (f"/git/{{ws}}.git/{found['rest']}", found["ws"]) if found else None


def _service(rest: str, query: str, method: str) -> str | None:
    if rest == "info/refs" and method == "GET":
        asked = dict(part.partition("=")[::2] for part in query.split("&") if part)
        return asked.get("service") if asked.get("service") in _SERVICES else None
    return rest if rest in _SERVICES and method == "POST" else None


def _authorize(connection: ASGIConnection[Any, Any, Any, Any], ws: str, action: Action) -> Grant:
    """The token's grant, once it may do `action` on `ws`."""
    return guard.authorize(connection.app.state["data"], connection, ws, action)


async def _live(scope: Scope, ws: str) -> LiveWorkspace:
    state = scope["app"].state
    hub: Hub = state["hub"]
    held = hub.held(ws)
    if held is None:
        held = await anyio.to_thread.run_sync(hub.workspace, ws)
    swept: set[str] = state.setdefault("swept", set())
    if ws not in swept:  # a quarantine left by a stopped service is no push in flight
        swept.add(ws)
        await anyio.to_thread.run_sync(incoming.sweep, held.store.root)
    return held


async def _upload(scope: HTTPScope, receive_: Receive, send: Send, ws: str, rest: str, query: str) -> None:
    headers = _headers(scope)
    asked = upload.Asked(
        method=scope["method"],
        path=f"/{ws}/{rest}",
        query=query,
        content_type=headers.get("content-type", ""),
        content_encoding=headers.get("content-encoding", ""),
        protocol=headers.get("git-protocol", ""),
        client=(scope.get("client") or ("", 0))[0],
    )

    async def start(answer: upload.Answer) -> None:
        await send({"type": "http.response.start", "status": answer.status, "headers": answer.headers})

    root = scope["app"].state["data"].root / "workspaces"
    body = _chunks(receive_)
    if upload.v2(asked) and rest == "info/refs":
        answered = upload.advertise(root, asked, start)
    elif upload.v2(asked) and not asked.content_encoding:
        try:
            listed, body = await _ls_refs(scope, ws, pkt.Body(lambda: anext(body, None)))
        except EndpointError as exc:  # git prints an ERR packet as "remote error: …"
            said = pkt.line(f"ERR {exc}\n".encode())
            return await _bytes(send, 200, said, "application/x-git-upload-pack-result")
        if listed is not None:
            return await _bytes(send, 200, listed, "application/x-git-upload-pack-result")
        answered = upload.serve(root, asked, body, start)
    else:
        answered = upload.serve(root, asked, body, start)
    async for chunk in answered:
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _ls_refs(scope: HTTPScope, ws: str, body: pkt.Body) -> tuple[bytes | None, AsyncIterator[bytes]]:
    """A v2 request's answer when it is `ls-refs` (the endpoint's own), else None and the
    whole body again for `git upload-pack`."""
    first = await body.pkt()
    if first != lsrefs.COMMAND:
        return None, _again(b"0000" if first is None else pkt.line(first), body.rest())
    held = b""
    async for chunk in body.rest():
        held += chunk
        if len(held) > lsrefs.MAX_REQUEST:
            raise BadRequest(f"an ls-refs request of more than {lsrefs.MAX_REQUEST:,} bytes")
    asked = lsrefs.parse(held)
    live = await _live(scope, ws)
    return lsrefs.answer(live.store.head(), asked), _again(b"", body.rest())


async def _again(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if first:
        yield first
    async for chunk in rest:
        yield chunk


async def _receive_pack(
    scope: HTTPScope, receive_: Receive, send: Send, live: LiveWorkspace, pusher: Grant
) -> None:
    chunks = _chunks(receive_)
    body = pkt.Body(lambda: anext(chunks, None))
    try:
        request = await receiving.read_request(body)
    except EndpointError as exc:
        return await _text(send, exc.status, f"{exc}\n")
    headers = [(b"content-type", b"application/x-git-receive-pack-result"), *_NO_CACHE]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    if not request.commands:  # git's probe before a large push: the credentials were good
        return await send({"type": "http.response.body", "body": b"", "more_body": False})
    report = receiving.Report(request)
    state = scope["app"].state
    try:
        await _receive(live, request, body, report, state["log"], pusher)
    except ClientGone:
        raise
    except Exception as exc:  # the answer has started: the client is told, the service goes on
        state["log"].error("push-failed", workspace=live.name, error=repr(exc))
        report.refuse_all("failed", "the push failed inside the service; main did not move")
    for command in request.commands:
        why = report.results.get(command.ref, "failed")
        state["metrics"].pushed(live.name, "accepted" if why is None else _outcome(why))
    await send({"type": "http.response.body", "body": report.encode(), "more_body": False})


async def _receive(
    live: LiveWorkspace,
    request: receiving.Request,
    body: pkt.Body,
    report: receiving.Report,
    log: Any,
    pusher: Grant,
) -> None:
    """A push's pack taken and its refs updated, or refused, as `report` tells it."""
    refused = receiving.too_many(request)
    if refused is not None:
        report.refuse_all("too many refs", refused)
        return await _drain(body)
    held = incoming.Incoming(live.store.root) if request.sends_pack else None
    settled = True
    try:
        if held is not None and not await _unpack(held, request, body, report):
            return
        if request.atomic and receiving.refuse_atomic(report):
            return
        for command in request.commands:
            settled = await _update(live, held, command, report, log, pusher) and settled
    finally:
        if held is not None and settled:  # else the writer may still read it: swept at the next start
            held.drop()


async def _unpack(
    held: incoming.Incoming, request: receiving.Request, body: pkt.Body, report: receiving.Report
) -> bool:
    """The pack into the quarantine; False when it is not taken (the report says why)."""
    try:
        await held.receive(body.rest())
    except EndpointError as exc:
        unknown = [s for s in request.shallow if not held.known(s)]
        told = receiving.cut_message(unknown) if unknown else str(exc)
        report.refuse_all("unpacker error", told, unpack="error")
        return False
    return True  # every object the pack names is at hand: a shallow clone's pack connects


async def _drain(body: pkt.Body) -> None:
    """The rest of a refused push's body read (and dropped), so git reads the answer."""
    taken = 0
    async for chunk in body.rest():
        taken += len(chunk)
        if taken > incoming.MAX_PACK_BYTES:
            return


async def _update(
    live: LiveWorkspace,
    held: incoming.Incoming | None,
    command: receiving.Command,
    report: receiving.Report,
    log: Any,
    pusher: Grant,
) -> bool:
    """One ref update of a push, as the report tells it; False when the writer may still be
    landing it (the wait timed out)."""
    from service.adapters.sync.errors import SyncError
    from service.adapters.sync.intake import RemoteRefused
    from service.adapters.sync.pushed import Pushed

    ref = command.ref
    refused = receiving.never_landed(command)
    if refused is not None or held is None:
        report.refuse(ref, *(refused or receiving.NEVER_DELETED))
        return True
    try:
        job = await live.writer.submit_alone_async(
            lambda space: land(space, held, command.old, command.new, "the push", pusher), PUSH_TIMEOUT_S
        )
        landed = job.answer()
    except RemoteRefused as exc:
        log.info("push-refused", workspace=live.name, code=exc.code, path=exc.path)
        where = exc.path or "the root tree"
        told = f"refused: {where} {exc.what}; main did not move; take it out of the commits you push"
        report.refuse(ref, "refused by the push gate", told)
    except SyncError as exc:
        log.info("push-refused", workspace=live.name, code=exc.code)
        report.refuse(ref, exc.code, f"refused: {exc}")
    except WriteTimeout:
        report.refuse(ref, "timed out", "the push took too long; fetch to see whether it landed")
        return False
    except Exception as exc:  # the answer has started: the client is told, the service goes on
        log.error("push-failed", workspace=live.name, error=repr(exc))
        report.refuse(ref, "failed", "the push failed inside the service; main did not move")
    else:
        count = len(landed.all_events()) if isinstance(landed, Pushed) else 0
        report.accept(ref, f"main is at {command.new[:12]}: {count} new event{'s' * (count != 1)}")
    return True


def _outcome(why: str) -> str:
    """A refusal as a metric label: its code, or the kind of refusal (never free text)."""
    return why if why.startswith("push-") else _REFUSALS.get(why, "refused")


_REFUSALS = {
    "refused by the push gate": "gate",
    "main is never deleted": "delete",
    "only refs/heads/main is kept here": "other-ref",
    "unpacker error": "unpack",
    "too many refs": "too-many",
    receiving.ATOMIC_FAILED: "atomic",
    "timed out": "timeout",
    "failed": "failed",
}


async def _chunks(receive_: Receive) -> AsyncIterator[bytes]:
    """The request body as it arrives; ClientGone when the client hangs up before its end."""
    while True:
        message = await receive_()
        if message["type"] == "http.disconnect":
            raise ClientGone("the client hung up")
        body = message.get("body", b"")
        yield body if isinstance(body, bytes) else b""
        if not message.get("more_body", False):
            return


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


async def _text(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    await _bytes(send, status, text.encode(), "text/plain; charset=utf-8", extra)


async def _bytes(
    send: Send, status: int, body: bytes, kind: str, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode()), *_NO_CACHE]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body, "more_body": False})


ROUTES = [git_endpoint]
