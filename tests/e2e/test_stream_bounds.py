"""The change feed through a real `self serve`: a cursor returns an event that arrived with an
older id; subscribers that never read are dropped, and cost the service nothing once gone
(hundreds leaving at once held its loop for seconds); a revoked token ends its open streams
(the API's and the web view's) within a second."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from service.adapters.store import Store
from service.core.events import ids
from tests.support import gitclient as gc
from tests.support.selfrun import base_env, describe, run_self
from tests.support.serving import Listener, Service, admin, token, token_id

WS, SLUG = "acme", "web"
EVENTS = f"/api/v1/workspaces/{WS}/events"
PAGES = f"/api/v1/workspaces/{WS}/projects/{SLUG}/events"


@dataclass
class Running:
    data: Path
    service: Service
    writer: str
    reader: str
    doomed: str  # a reader's token a test revokes

    @property
    def store(self) -> Path:
        return self.data / "workspaces" / WS

    def post(self, text: str) -> str:
        event = {"type": "entity.confirmed", "project": SLUG, "payload": {"text": text, "labels": ["idea"]}}
        with self.service.client(self.writer) as client:
            answer = client.post(EVENTS, json={"events": [event]})
        assert answer.status_code == 201, answer.text
        return str(answer.json()["ids"][0])


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    data = tmp_path / "data"
    admin(data, "workspace", "add", WS)
    admin(data, "user", "add", "ann")
    writer, reader = token(data, "ann", WS, "writer"), token(data, "ann", WS, "reader")
    doomed = token(data, "ann", WS, "reader")
    env = base_env() | {"SELF_WORKSPACE": str(data / "workspaces" / WS), "SELF_PROJECT": SLUG}
    made = run_self(("project", "add", SLUG, "--desc", "the web app"), env)
    assert made.returncode == 0, describe(made)
    service = Service(data, tmp_path / "serve.log")
    try:
        yield Running(data, service, writer, reader, doomed)
    finally:
        service.stop()


def test_a_cursor_returns_an_event_that_arrived_with_an_older_id(running: Running) -> None:
    older = gc.new_id()  # written offline: older than what the reader is about to see
    newer = running.post("posted while the other was offline")
    with running.service.client(running.reader) as client:
        page = client.get(PAGES).json()
        assert page["events"][-1]["id"] == newer and page["next"] is None
        cursor = page["cursor"]
        with Store.open(running.store) as store:  # a sync brings it in, from outside the service
            store.write_lines({SLUG: [gc.event(SLUG, "written offline", older)[1]]}, [])
        later = client.get(PAGES, params={"after": cursor}).json()
        assert [e["id"] for e in later["events"]] == [older], "arrived after the cursor, whatever its id"
        assert client.get(PAGES, params={"after": later["cursor"]}).json()["events"] == []
        by_id = client.get(PAGES, params={"after": newer}).json()
        assert by_id["events"] == [] and by_id["next"] is None, "an id as `after` pages by id, as before"
        foreign = client.get(PAGES, params={"after": "0badcafe.1"})
        assert foreign.status_code == 422 and "another arrival journal" in foreign.json()["detail"]
    listener = Listener(running.service, running.reader, last=cursor)
    got = listener.until(1)
    listener.close()
    assert [d["id"] for _, d in got] == [older], "Last-Event-ID resumes by arrival too"


IDLE = 120  # under the reader token's burst (200) and the connections from one address (256)


def idle_streams(running: Running, n: int) -> list[socket.socket]:
    """`n` streams on raw sockets that are never read (a 4 KiB receive buffer fills at once)."""
    request = (
        f"GET /api/v1/workspaces/{WS}/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {running.reader}\r\n\r\n"
    ).encode()
    held: list[socket.socket] = []
    for _ in range(n):
        conn = socket.create_connection(("127.0.0.1", running.service.port))
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        conn.sendall(request)
        held.append(conn)
    return held


def post_many(running: Running, events: int, batch: int, size: int) -> None:
    text = "x" * size
    with running.service.client(running.writer) as client:
        for first in range(0, events, batch):
            body = [
                {
                    "type": "entity.confirmed",
                    "project": SLUG,
                    "payload": {"text": f"{n} {text}", "labels": ["x"]},
                }
                for n in range(first, first + batch)
            ]
            assert client.post(EVENTS, json={"events": body}).status_code == 201


def streams_open(running: Running) -> int:
    text = httpx.get(running.service.url + "/metrics", timeout=30).text
    return int(
        float(next(ln.split()[-1] for ln in text.splitlines() if ln.startswith("selfhub_stream_clients")))
    )


def healthz_s(running: Running) -> float:
    started = time.monotonic()
    answer = httpx.get(running.service.url + "/healthz", timeout=60)
    assert answer.status_code == 200
    return time.monotonic() - started


@pytest.mark.slow
def test_subscribers_that_never_read_then_leave_at_once_cost_the_service_nothing(running: Running) -> None:
    idle = idle_streams(running, IDLE)
    time.sleep(0.5)
    post_many(running, 900, 60, 5000)  # past what the kernel buffers of a connection hold: sends wait
    post_many(running, 3000, 500, 100)  # what each idle stream has yet to send
    for conn in idle:
        conn.close()
    took = healthz_s(running)
    worst = max(healthz_s(running) for _ in range(5))
    assert took < 1.0 and worst < 1.0, f"/healthz took {took:.1f} s, then at worst {worst:.1f} s"


@pytest.mark.slow
def test_a_subscriber_that_does_not_read_is_dropped_and_one_that_reads_goes_on(running: Running) -> None:
    idle = idle_streams(running, 20)
    reading = Listener(running.service, running.reader)
    time.sleep(0.5)
    assert streams_open(running) == 21
    post_many(running, 1200, 60, 5000)  # past what the kernel buffers of a connection hold
    assert len(reading.until(1200, seconds=20)) == 1200, "a stream that reads gets every event"
    deadline = time.monotonic() + 15
    while streams_open(running) > 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert streams_open(running) == 1, "a stream whose client has read nothing for 5 s is dropped"
    got = 0
    for conn in idle:  # what the service had buffered, then the end of the connection
        conn.settimeout(10)
        try:
            while chunk := conn.recv(1 << 16):
                got += len(chunk)
        except ConnectionResetError:
            pass
        conn.close()
    assert got > 0
    last = reading.got[-1][0]
    reading.close()
    resumed = Listener(running.service, running.reader, last=last)
    newest = running.post("after the drop")
    assert [d["id"] for _, d in resumed.until(1)] == [newest], "Last-Event-ID resumes where it was"
    resumed.close()


class Stream:
    """A stream read in a thread: its events' ids, and when it ended."""

    def __init__(self, client: httpx.Client, path: str) -> None:
        self.client = client
        self.ids: list[str] = []
        self.ended: float | None = None
        self.open = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(client, path), daemon=True)
        self._thread.start()
        assert self.open.wait(10), "the stream did not open"

    def _read(self, client: httpx.Client, path: str) -> None:
        try:
            with client.stream("GET", path) as answer:
                assert answer.status_code == 200
                self.open.set()
                for line in answer.iter_lines():
                    if line.startswith("data:"):
                        self.ids.append(line.partition('"id":"')[2][:26])
        except (httpx.HTTPError, RuntimeError, OSError):
            pass  # ended by the service, or by `close`
        self.ended = time.monotonic()

    def close(self) -> None:
        self.client.close()
        self._thread.join(10)


@pytest.mark.slow  # three streams, a revoke by a real process: about 10 s under load
def test_a_revoked_token_ends_its_api_and_web_streams_within_a_second(running: Running) -> None:
    service = running.service
    api = Stream(service.client(running.doomed), f"/api/v1/workspaces/{WS}/stream")
    browser = httpx.Client(base_url=service.url, timeout=httpx.Timeout(30, read=60))
    signed = browser.post("/signin", data={"token": running.doomed}, headers={"Origin": service.url})
    assert signed.status_code == 303, signed.text
    web = Stream(browser, f"/ws/{WS}/live")
    kept = Stream(service.client(running.reader), f"/api/v1/workspaces/{WS}/stream")
    time.sleep(0.3)
    before = running.post("before the revoke")
    admin(running.data, "token", "revoke", token_id(running.data, running.doomed))
    revoked = time.monotonic()
    deadline = revoked + 5
    while (api.ended is None or web.ended is None) and time.monotonic() < deadline:
        time.sleep(0.02)
    after = running.post("after the revoke")
    assert api.ended is not None and api.ended - revoked < 1.5, "the API stream ends within a second"
    assert web.ended is not None and web.ended - revoked < 1.5, "the web view's stream too"
    assert before in api.ids and after not in api.ids and after not in web.ids
    deadline = time.monotonic() + 5
    while after not in kept.ids and time.monotonic() < deadline:
        time.sleep(0.02)
    assert kept.ended is None and after in kept.ids, "a stream of a token still valid goes on"
    assert ids.is_id(after)
    for stream in (api, web, kept):
        stream.close()
