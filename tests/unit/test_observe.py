"""The wrapper around every request (`service/server/api/observe.py`), driven with plain ASGI apps:
the time limit ends at the answer's start (a stream runs on), an answer not started in time
is a 503 at once even when the handler sits in a worker thread, the request id goes back in
a header, and each request gives one log line and one count."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread

from service.server.api import logs
from service.server.api.config import Logging
from service.server.api.metrics import Metrics
from service.server.api.observe import Observe

App = Callable[[Any, Any, Any], Awaitable[None]]
LIMIT = 0.2


def scope(headers: list[tuple[bytes, bytes]] | None = None) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "GET",
        "path": "/x",
        "headers": headers or [],
        "path_template": "/api/v1/workspaces/{ws}/things",
        "path_params": {"ws": "acme"},
        "state": {},
    }


class Run:
    """One request through Observe(app): what was sent, when, the log and the metrics."""

    def __init__(self, app: App, headers: list[tuple[bytes, bytes]] | None = None) -> None:
        self.sent: list[tuple[float, dict[str, Any]]] = []
        self.out = io.StringIO()
        self.metrics = Metrics()
        wrapped = Observe(app, self.metrics, logs.logger(Logging(), self.out), LIMIT)
        self.began = time.monotonic()

        async def receive() -> dict[str, Any]:
            await anyio.sleep(3600)
            return {}

        async def send(message: dict[str, Any]) -> None:
            self.sent.append((time.monotonic() - self.began, message))

        anyio.run(wrapped, scope(headers), receive, send)
        self.returned = time.monotonic() - self.began

    @property
    def status(self) -> int:
        return int(self.sent[0][1]["status"])

    def header(self, name: bytes) -> bytes:
        return dict(self.sent[0][1]["headers"])[name]

    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for _, m in self.sent if m["type"] == "http.response.body")

    def line(self) -> dict[str, Any]:
        (only,) = self.out.getvalue().splitlines()
        return dict(json.loads(only))

    def count(self, status: str) -> float:
        labels = {"route": "/api/v1/workspaces/{ws}/things", "method": "GET", "status": status}
        return self.metrics.registry.get_sample_value("selfhub_requests_total", labels) or 0.0


async def start(send: Any, status: int = 200) -> None:
    await send(
        {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/plain")]}
    )


def test_a_quick_answer_passes_with_the_request_id_and_one_line() -> None:
    async def app(_: Any, __: Any, send: Any) -> None:
        await start(send)
        await send({"type": "http.response.body", "body": b"ok", "more_body": False})

    run = Run(app, [(b"x-request-id", b"trace-1")])
    assert run.status == 200 and run.body() == b"ok"
    assert run.header(b"x-request-id") == b"trace-1"
    line = run.line()
    assert {k: line[k] for k in ("request_id", "workspace", "route", "method", "status", "user")} == {
        "request_id": "trace-1",
        "workspace": "acme",
        "route": "/api/v1/workspaces/{ws}/things",
        "method": "GET",
        "status": 200,
        "user": None,
    }
    assert run.count("200") == 1


def test_a_stream_started_in_time_runs_past_the_limit() -> None:
    async def app(_: Any, __: Any, send: Any) -> None:
        await start(send)
        for n in range(4):
            await anyio.sleep(LIMIT)
            await send({"type": "http.response.body", "body": b"event %d\n" % n, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    run = Run(app)
    assert run.status == 200 and run.body() == b"event 0\nevent 1\nevent 2\nevent 3\n"
    assert run.line()["duration_ms"] >= 4 * LIMIT * 1000


def test_an_answer_not_started_in_time_is_a_503_and_what_comes_later_is_dropped() -> None:
    async def app(_: Any, __: Any, send: Any) -> None:
        await anyio.sleep(5 * LIMIT)
        await start(send)

    run = Run(app)
    assert run.status == 503 and len(run.sent) == 2
    assert json.loads(run.body())["code"] == "timeout"
    assert dict(run.sent[0][1]["headers"])[b"content-type"] == b"application/problem+json"
    assert LIMIT <= run.sent[0][0] < 3 * LIMIT
    assert run.returned < 3 * LIMIT, "an awaiting handler is cancelled"
    assert run.line()["status"] == 503 and run.count("503") == 1


def test_a_handler_in_a_worker_thread_gets_its_503_at_the_limit() -> None:
    finished: list[float] = []

    def work() -> None:
        time.sleep(4 * LIMIT)
        finished.append(time.monotonic())

    async def app(_: Any, __: Any, send: Any) -> None:
        await anyio.to_thread.run_sync(work)  # a thread ignores cancellation
        await start(send)

    run = Run(app)
    assert run.status == 503 and len(run.sent) == 2
    assert run.sent[0][0] < 3 * LIMIT, "answered at the limit, not when the thread returned"
    assert not finished, "the 503 did not wait for the thread"
    deadline = time.monotonic() + 10
    while not finished:
        assert time.monotonic() < deadline, "the thread never finished"
        time.sleep(0.01)


def test_a_client_request_id_that_looks_like_a_token_is_replaced() -> None:
    secret = "shb_" + "k" * 43

    async def app(_: Any, __: Any, send: Any) -> None:
        await start(send, 204)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    run = Run(app, [(b"x-request-id", secret.encode())])
    given = run.header(b"x-request-id").decode()
    assert given != secret and run.line()["request_id"] == given
    assert secret not in run.out.getvalue()
