"""Several `self serve --replicated` instances mirroring one bare repository under `git daemon`
(the host), each with its own data directory and its own tokens, as real processes.

Held here: a write answered 201 is on the host already and names the commit that holds it
(`Selfhub-Commit`); another instance asked for that commit (`Selfhub-Min-Commit`) answers with
the write in it, and a bad or unknown commit is a 422 or a 503 with `Retry-After`; writers
spread over every instance leave every acknowledged event once on the host and on every
instance; an instance killed with SIGKILL during the writes loses no acknowledged event, and
comes back on its data directory and converges; the host unreachable: a write is a 503
`not-replicated`, nothing acknowledged is lost, and the write the client was refused is
pushed once the host is back (a retry with its ids is then a replay)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_mcp import written_id
from tests.e2e.test_serve_remote import WS, Backend, eventually, git, seeded
from tests.support.serving import Service, admin, token
from tests.support.sync_support import remote_ids

pytestmark = pytest.mark.slow  # three `self admin` runs and a service per instance: seconds each

SLUG = "web"
PROBLEM = "application/problem+json"


class Instance:
    """`self serve --replicated` over a data directory of its own whose workspace WS mirrors
    the host, with its own tokens."""

    def __init__(self, root: Path, url: str, wait_s: float = 1.0, users_of: Instance | None = None) -> None:
        """`users_of`: an instance whose users and tokens this one takes (a copy of its
        `auth.sqlite`), so one token opens both."""
        self.root = root
        self.data = root / "data"
        admin(self.data, "workspace", "add", WS, "--remote", url, "--poll", "60")
        admin(self.data, "workspace", "add", "hosted")
        if users_of is None:
            admin(self.data, "user", "add", "ann")
            self.writer = token(self.data, "ann", WS, "writer")
            self.reader = token(self.data, "ann", WS, "reader")
            self.hosted = token(self.data, "ann", "hosted", "writer")
        else:
            for path in users_of.data.glob("auth.sqlite*"):
                shutil.copy(path, self.data / path.name)
            self.writer, self.reader, self.hosted = users_of.writer, users_of.reader, users_of.hosted
        self.config = root / "serve.toml"
        self.config.write_text(f"[replication]\nwait_s = {wait_s}\n")
        self.service = self.start()

    def start(self) -> Service:
        """The process on this data directory (again, after a kill)."""
        log = self.root / f"serve-{uuid.uuid4().hex[:6]}.log"
        service = Service(self.data, log, self.config, env={"SELF_REPLICATED": "1"})
        service.wait("/readyz")
        return service

    def post(self, text: str, ids: list[str] | None = None) -> httpx.Response:
        event: dict[str, object] = {"type": "entity.confirmed", "project": SLUG, "payload": {"text": text}}
        if ids:
            event["id"] = ids[0]
        with self.service.client(self.writer) as client:
            return client.post(f"/api/v1/workspaces/{WS}/events", json={"events": [event]})

    def read(self, min_commit: str | None = None) -> httpx.Response:
        headers = {"Selfhub-Min-Commit": min_commit} if min_commit is not None else {}
        with self.service.client(self.reader) as client:
            return client.get(
                f"/api/v1/workspaces/{WS}/projects/{SLUG}/state", params={"all": "1"}, headers=headers
            )

    def ids(self) -> list[str]:
        """Every event id of the workspace's store here, read with git, repeats kept."""
        return remote_ids(self.data / "workspaces" / WS)


def texts(answer: httpx.Response) -> set[str]:
    assert answer.status_code == 200, answer.text
    return {row["text"] for row in answer.json()}


def on_host(backend: Backend) -> list[str]:
    return remote_ids(backend.bare)


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[Backend]:
    found = Backend(tmp_path / "git")
    found.start()
    try:
        seeded(tmp_path, found)
        yield found
    finally:
        found.stop()


@pytest.fixture
def instances(tmp_path: Path, backend: Backend, request: pytest.FixtureRequest) -> Iterator[list[Instance]]:
    n = getattr(request, "param", 2)
    made: list[Instance] = []
    try:
        for i in range(n):
            made.append(Instance(tmp_path / f"i{i}", backend.url))
        yield made
    finally:
        for instance in made:
            instance.service.stop()


def test_a_write_is_on_the_host_when_answered_and_read_on_another_with_its_commit(
    backend: Backend, instances: list[Instance]
) -> None:
    a, b = instances
    answer = a.post("written on a")
    assert answer.status_code == 201, answer.text
    commit = answer.headers["Selfhub-Commit"]
    (event_id,) = answer.json()["ids"]
    assert answer.json()["commit"] == commit
    assert backend.head() == commit  # the host holds it: nothing wrote since
    assert event_id in on_host(backend)

    assert "written on a" in texts(b.read(commit))  # fetched from the host before answering
    assert "written on a" in texts(a.read(commit))


def test_a_command_and_a_hosted_workspace_name_their_commit(instances: list[Instance]) -> None:
    a = instances[0]
    with a.service.client(a.writer) as client:
        command = {"command": "add", "preset": "goal", "text": "a command"}
        answer = client.post(f"/api/v1/workspaces/{WS}/commands", params={"project": SLUG}, json=command)
    assert answer.status_code == 201, answer.text
    commit = answer.headers["Selfhub-Commit"]
    assert git("-C", str(a.data / "workspaces" / WS), "rev-parse", "main").strip() == commit

    with a.service.client(a.hosted) as client:  # no backend: the commit here
        hosted = client.post(
            "/api/v1/workspaces/hosted/commands", json={"command": "project-add", "slug": "site"}
        )
    assert hosted.status_code == 201, hosted.text
    assert (
        hosted.headers["Selfhub-Commit"]
        == git("-C", str(a.data / "workspaces" / "hosted"), "rev-parse", "main").strip()
    )


def test_a_bad_or_unknown_min_commit_is_refused_in_one_line(instances: list[Instance]) -> None:
    a = instances[0]
    bad = a.read("not-a-commit")
    assert bad.status_code == 422, bad.text
    assert bad.headers["content-type"].startswith(PROBLEM)
    assert "40 hex digits" in bad.json()["detail"]

    unknown = a.read("0123456789abcdef" * 2 + "01234567")  # waits [replication] wait_s, fetching
    assert unknown.status_code == 503, unknown.text
    assert unknown.json()["code"] == "not-yet"
    assert unknown.headers["Retry-After"] == "1"


def _write_many(instances: list[Instance], writers: int, each: int, stop: threading.Event) -> list[str]:
    """`writers` threads, each posting `each` events round-robin over the instances (until
    `stop`); the ids of every post answered 201 (acknowledged)."""
    acknowledged: list[str] = []
    lock = threading.Lock()

    def write(w: int) -> None:
        for n in range(each):
            if stop.is_set():
                return
            instance = instances[(w + n) % len(instances)]
            try:
                answer = instance.post(f"w{w} n{n}")
            except httpx.HTTPError:
                continue  # a killed instance: not acknowledged
            if answer.status_code == 201:
                with lock:
                    acknowledged.extend(answer.json()["ids"])

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return acknowledged


def _everywhere(backend: Backend, instances: list[Instance], acknowledged: list[str]) -> None:
    """Every acknowledged event once on the host and, once each instance holds the host's
    head, once on each."""
    host = on_host(backend)
    assert len(host) == len(set(host)), "an event twice on the host"
    assert set(acknowledged) <= set(host)
    head = backend.head()
    assert head is not None
    for instance in instances:
        assert instance.read(head).status_code == 200  # its states include the host's head
        ids = instance.ids()
        assert len(ids) == len(set(ids)), "an event twice on an instance"
        assert set(acknowledged) <= set(ids)


@pytest.mark.slow
@pytest.mark.parametrize("instances", [3], indirect=True)
def test_writers_spread_over_every_instance_leave_each_event_once_everywhere(
    backend: Backend, instances: list[Instance]
) -> None:
    acknowledged = _write_many(instances, writers=4, each=50, stop=threading.Event())
    assert len(acknowledged) == 200  # every post answered 201
    _everywhere(backend, instances, acknowledged)


@pytest.mark.slow
@pytest.mark.parametrize("instances", [3], indirect=True)
def test_an_instance_killed_during_writes_loses_no_acknowledged_event(
    backend: Backend, instances: list[Instance]
) -> None:
    victim = instances[0]
    stop = threading.Event()
    found: list[str] = []
    writing = threading.Thread(target=lambda: found.extend(_write_many(instances, 4, 40, stop)))
    writing.start()
    eventually(lambda: len(on_host(backend)) >= 20, what="writes under way")
    os.kill(victim.service.proc.pid, signal.SIGKILL)
    victim.service.proc.wait()
    writing.join()
    assert len(found) >= 100  # the survivors kept acknowledging
    _everywhere(backend, instances[1:], found)

    victim.service.stop()
    victim.service = victim.start()  # the same data directory
    head = backend.head()
    assert head is not None
    assert texts(victim.read(head))
    _everywhere(backend, instances, found)


@pytest.mark.slow
def test_the_host_unreachable_refuses_writes_and_loses_nothing(
    backend: Backend, instances: list[Instance]
) -> None:
    a, b = instances
    kept = a.post("before")
    assert kept.status_code == 201, kept.text
    backend.stop()
    with ExitStack() as restart:
        restart.callback(backend.start)
        refused = a.post("while down", ids=None)
        assert refused.status_code == 503, refused.text
        assert refused.headers["content-type"].startswith(PROBLEM)
        assert refused.json()["code"] == "not-replicated"
        assert "not acknowledged" in refused.json()["detail"]
    assert set(kept.json()["ids"]) <= set(on_host(backend))
    # the refused write stayed here and the next round pushes it: the client was told 503,
    # so a retry of a post without ids would write it twice (one with ids is a replay)
    eventually(lambda: "while down" in b.read(backend.head()).text, what="pushed later")
    host = on_host(backend)
    assert len(host) == len(set(host))


class Balancer:
    """A loopback TCP proxy to one instance at a time (`to`): a load balancer that moved its
    client to another instance."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        threading.Thread(target=self._serve, daemon=True).start()

    def to(self, instance: Instance) -> None:
        self.target = instance.service.port

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                threading.Thread(target=_link, args=(client, self.target), daemon=True).start()

    def close(self) -> None:
        self.listener.close()


def _link(client: socket.socket, port: int) -> None:
    with client, socket.create_connection(("127.0.0.1", port)) as server:
        back = threading.Thread(target=_pipe, args=(server, client), daemon=True)
        back.start()
        _pipe(client, server)
        back.join()


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := src.recv(65536):
            dst.sendall(data)
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


def test_the_mcp_relay_reads_its_own_write_on_another_instance(tmp_path: Path, backend: Backend) -> None:
    import anyio

    from service.app import mcpserver, tools

    a = Instance(tmp_path / "a", backend.url)
    b = Instance(tmp_path / "b", backend.url, users_of=a)
    balancer = Balancer(a.service.port)
    try:
        relay = mcpserver.relay(f"http://127.0.0.1:{balancer.port}/mcp", a.writer)

        def call(name: str, **arguments: Any) -> mcpserver.Answered:
            return anyio.run(relay, tools.parse(name, arguments), None)

        wrote = call("record", project=SLUG, kind="idea", text="relayed through a")
        assert not wrote.error, wrote.text
        assert "relayed through a" in texts(a.read())
        balancer.to(b)  # b has not fetched it: no webhook, a poll a minute away
        read = call("show", id=written_id(wrote.text))
        assert not read.error, read.text
        assert "relayed through a" in read.text  # the relay named its write's commit
    finally:
        balancer.close()
        for instance in (a, b):
            instance.service.stop()
