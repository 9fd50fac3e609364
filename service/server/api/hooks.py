"""`POST /hooks/WS`: a git host's push delivery for a remote-backed workspace. The signature is
the authentication (no bearer token), so the route is outside `/api/v1` and its guard; the
rate limit still applies, per client address.

The raw body is read under a cap (`MAX_BODY`, 413 past it) and judged by
`service/core/gates/webhook.py`: GitHub's `X-Hub-Signature-256`, Forgejo's and Gitea's
`X-Forgejo-Signature` / `X-Gitea-Signature` (HMAC-SHA256 of the body), GitLab's
`X-Gitlab-Token` (the secret), in constant time, against the secret in the environment
variable the workspace names and, during a rotation, the one in `VAR_PREVIOUS`. A workspace
that does not exist, one the service hosts itself, one without a secret set, a delivery
without a signature and one whose signature does not match get one and the same 401 (the log
line says which). A verified delivery id seen before is 409 (the last `KEPT_DELIVERIES` are
kept), and so is a verified body seen in the last `REPLAY_WINDOW_S`, whatever delivery id or
host headers come with it: a signature covers the body only, so a body is what was signed.
A push to another branch, or of a commit this service pushed, is answered 202 and
fetches nothing; any other is answered 202 at once and asks for one sync of the workspace
(coalesced with the one in flight), and is announced to the other instances (`Mirrors.announce`)."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec
from litestar import Response, post

from service.adapters.sync.errors import SyncError
from service.core.commands.commands import SLUG
from service.core.gates.webhook import Verdict, ignored, push_of, verify
from service.server.api import openapi
from service.server.api.bodies import HookAnswer
from service.server.api.errors import ApiError
from service.server.api.routes import AnyRequest, answer

if TYPE_CHECKING:
    from service.adapters.data.backends import Backend
    from service.server.api.limits import Limiter
    from service.server.api.metrics import Metrics
    from service.server.mirror.mirrors import Mirrors

MAX_BODY = 1024 * 1024  # GitHub's push payloads are a few kilobytes; a bigger one is no push
KEPT_DELIVERIES = 10_000  # delivery ids remembered for the replay check (about 1 MiB)
REPLAY_WINDOW_S = 600.0  # a signed body is refused again for this long (bounded by KEPT_DELIVERIES)
_DECOY = secrets.token_bytes(32)  # judged against when there is no secret: the same work either way


class HookRefused(ApiError):
    code = "webhook-refused"

    def __init__(self) -> None:
        super().__init__(
            "no webhook of this service accepts this delivery: check the workspace name in the URL, "
            "that the workspace was added with --remote and --webhook-secret-env, and that the host "
            "signs with the secret that variable holds (content type application/json)"
        )


class HookReplayed(ApiError):
    code = "webhook-replayed"

    def __init__(self) -> None:
        super().__init__(
            "this delivery (its id, or its signed body) was received already; nothing is fetched again"
        )


class HookBody(ApiError):
    code = "webhook-body"

    def __init__(self) -> None:
        super().__init__("the body is not a JSON object: set the webhook's content type to application/json")


class HookTooLarge(ApiError):
    code = "webhook-too-large"

    def __init__(self) -> None:
        super().__init__(f"a delivery's body is at most {MAX_BODY:,} bytes; nothing was read past that")


class Deliveries:
    """The delivery ids accepted lately, per workspace and host, and the bodies signed in the
    last `window` seconds, per workspace: the replay check."""

    def __init__(
        self,
        keep: int = KEPT_DELIVERIES,
        window: float = REPLAY_WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.keep, self.window, self.clock = keep, window, clock
        self._seen: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        self._signed: OrderedDict[tuple[str, bytes], float] = OrderedDict()  # oldest first
        self._lock = threading.Lock()

    def unsigned_before(self, ws: str, body: bytes) -> bool:
        """True when no delivery to `ws` signed `body` within the window (it is remembered
        now); False for a replay. At most `keep` bodies are held: the oldest go first."""
        key, now = (ws, hashlib.sha256(body).digest()), self.clock()
        with self._lock:
            while self._signed and (
                len(self._signed) >= self.keep or next(iter(self._signed.values())) <= now - self.window
            ):
                self._signed.popitem(last=False)
            if key in self._signed:
                return False
            self._signed[key] = now
            return True

    def first(self, key: tuple[str, str, str]) -> bool:
        """True the first time `key` is seen (and it is remembered); False for a replay."""
        with self._lock:
            if key in self._seen:
                return False
            self._seen[key] = None
            if len(self._seen) > self.keep:
                self._seen.popitem(last=False)
            return True


def secrets_of(backend: Backend | None) -> list[bytes]:
    """The secrets a delivery for `backend` may be signed with: `VAR`, and `VAR_PREVIOUS`
    during a rotation (each when set and not empty, or read from the file `VAR_FILE`,
    `VAR_PREVIOUS_FILE` names: `credentials.from_env`)."""
    from service.adapters.data.backends import PREVIOUS
    from service.adapters.sync.credentials import from_env

    if backend is None or backend.secret_env is None:
        return []
    names = (backend.secret_env, backend.secret_env + PREVIOUS)
    return [value.encode() for value in (from_env(n) for n in names) if value]


@post(
    "/hooks/{ws:str}",
    status_code=202,
    responses=openapi.answers(HookAnswer, 400, 401, 409, 413, 429, status=202),
    operation_class=openapi.operation(body=dict[str, Any]),
)
async def hook(request: AnyRequest, ws: str) -> Response[bytes]:
    """A push delivery from GitHub, Gitea, Forgejo or GitLab for remote-backed workspace `ws`:
    202 at once (a fetch asked for, or the delivery ignored and why), 401 unless signed with
    the workspace's secret, 409 for a delivery id seen before."""
    state = request.app.state
    counted: Metrics = state["metrics"]
    try:
        found = await _judge(request, ws, state["mirrors"], state["deliveries"])
    except ApiError as exc:
        counted.delivery(_OUTCOMES.get(exc.code, "refused"))
        raise
    counted.delivery(found.outcome)
    return answer(msgspec.json.encode(found) + b"\n", status=202)


_OUTCOMES = {
    "webhook-refused": "refused",
    "webhook-replayed": "replayed",
    "webhook-body": "bad-body",
    "webhook-too-large": "too-large",
    "rate-limited": "rate-limited",
}


async def _judge(request: AnyRequest, ws: str, mirrors: Mirrors, seen: Deliveries) -> HookAnswer:
    limiter: Limiter = request.app.state["limiter"]
    limiter.charge(f"hook:{request.client.host if request.client else '-'}")
    body = await _body(request)
    backend = mirrors.backend(ws) if SLUG.fullmatch(ws) else None
    headers = {name.lower(): value for name, value in request.headers.items()}
    log = request.app.state["log"]
    try:
        given = secrets_of(backend)
    except SyncError as exc:  # VAR_FILE unreadable: the log says so, the caller learns nothing
        log.error("webhook-secret-unreadable", workspace=ws, why=str(exc))
        given = []
    verdict = verify(headers, body, given or [_DECOY])
    named = ws if SLUG.fullmatch(ws) else None
    if backend is None or not given or not verdict.verified:
        why = "not-remote-backed" if backend is None else "no-secret-set" if not given else verdict.reason
        log.warning("webhook-refused", workspace=named, host=verdict.host, delivery=verdict.delivery, why=why)
        raise HookRefused()
    if (verdict.delivery is not None and not seen.first((ws, verdict.host or "", verdict.delivery))) or (
        not seen.unsigned_before(ws, body)
    ):
        log.warning("webhook-replayed", workspace=ws, host=verdict.host, delivery=verdict.delivery)
        raise HookReplayed()
    push = push_of(body)
    if push is None:
        log.warning("webhook-bad-body", workspace=ws, host=verdict.host, delivery=verdict.delivery)
        raise HookBody()
    reason = ignored(push, mirrors.own(ws))
    if reason is not None:
        return _answered(log, ws, verdict, HookAnswer("ignored", reason, verdict.delivery))
    mirrors.announce(ws, push.after)  # the other instances fetch it too
    started = mirrors.ask(ws, "webhook")
    return _answered(
        log, ws, verdict, HookAnswer("accepted" if started else "coalesced", None, verdict.delivery)
    )


def _answered(log: Any, ws: str, verdict: Verdict, found: HookAnswer) -> HookAnswer:
    log.info(
        "webhook",
        workspace=ws,
        host=verdict.host,
        delivery=verdict.delivery,
        outcome=found.outcome,
        reason=found.reason,
    )
    return found


async def _body(request: AnyRequest) -> bytes:
    """The raw body, read no further than `MAX_BODY` (HookTooLarge past it)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise HookTooLarge()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise HookTooLarge()
        chunks.append(chunk)
    return b"".join(chunks)


ROUTES = [hook]
