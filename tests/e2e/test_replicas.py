"""Several instances on one git host and one PostgreSQL database (`--identity`), on real
processes: a bare repository under `git daemon` as the host, two `self serve` mirroring it,
a real PostgreSQL server (tests/support/postgres.py).

Held here: a webhook delivered to one instance reaches the other within a second, with its
poll an hour away (the delivery is announced on the database's channel); so does a write on
one instance (its push is announced); exactly one instance polls the host (the one holding the
leader's lock, as its log says), and when it is killed with SIGKILL the other takes the lock,
and the poll, within its try interval; PostgreSQL stopped, every instance polls on its own, and
once it is back they join again by themselves and one polls."""

from __future__ import annotations

import json
import signal
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_serve_remote import (
    HOOK_ENV,
    OLD_SECRET,
    SECRET,
    SLUG,
    WS,
    Backend,
    eventually,
    push_body,
    seeded,
    signed,
)
from tests.support.postgres import Postgres, postgres
from tests.support.selfrun import base_env, describe, run_self
from tests.support.serving import Service

TRY_S = 1.0  # the cluster's lock try interval (service/adapters/cluster/members.py)


class Replica:
    """`self serve --identity URL` over a DATA of its own whose workspace WS mirrors the host,
    polled every `poll` seconds; a user of its own with a writer and a reader token."""

    def __init__(self, tmp: Path, name: str, host: str, identity: str, poll: float) -> None:
        self.data, self.log = tmp / name / "data", tmp / name / "serve.log"
        self.data.parent.mkdir(parents=True)
        self.env = {"SELF_IDENTITY": identity}
        self.admin(
            "workspace", "add", WS, "--remote", host, "--webhook-secret-env", HOOK_ENV, "--poll", str(poll)
        )
        user = f"ann-{name}-{uuid.uuid4().hex[:8]}"  # the database's users outlive a test
        self.admin("user", "add", user)
        self.writer = self.token(user, "writer")
        self.reader = self.token(user, "reader")
        hook_env = {HOOK_ENV: SECRET, HOOK_ENV + "_PREVIOUS": OLD_SECRET}
        self.service = Service(self.data, self.log, env=hook_env | self.env)
        self.service.wait("/readyz")

    def admin(self, *args: str) -> str:
        proc = run_self(("admin", *args, "--data", str(self.data)), base_env() | self.env)
        assert proc.returncode == 0, describe(proc)
        return proc.stdout

    def token(self, user: str, role: str) -> str:
        return self.admin("token", "create", user, "--workspace", WS, "--role", role).strip()

    def post(self, text: str) -> None:
        body = {"events": [{"type": "entity.confirmed", "project": SLUG, "payload": {"text": text}}]}
        with self.service.client(self.writer) as client:
            answer = client.post(f"/api/v1/workspaces/{WS}/events", json=body)
        assert answer.status_code == 201, answer.text

    def texts(self) -> set[str]:
        with self.service.client(self.reader) as client:
            answer = client.get(f"/api/v1/workspaces/{WS}/projects/{SLUG}/state", params={"all": "1"})
        assert answer.status_code == 200, answer.text
        return {row["text"] for row in answer.json()}

    def deliver(self, body: bytes, headers: dict[str, str]) -> httpx.Response:
        with httpx.Client(base_url=self.service.url, timeout=30) as client:
            return client.post(f"/hooks/{WS}", content=body, headers=headers)

    def events(self, name: str) -> list[dict[str, Any]]:
        lines = [json.loads(line) for line in self.log.read_text().splitlines() if line.startswith("{")]
        return [line for line in lines if line.get("event") == name]

    def rounds(self, trigger: str) -> float:
        """The rounds of `trigger` that ended well, as /metrics counts them."""
        answer = httpx.get(self.service.url + "/metrics", timeout=10)
        total = 0.0
        for line in answer.text.splitlines():
            labels = (f'trigger="{trigger}"', 'outcome="ok"', f'workspace="{WS}"')
            if line.startswith("selfhub_backend_syncs_total{") and all(x in line for x in labels):
                total += float(line.rsplit(" ", 1)[1])
        return total


@pytest.fixture(scope="module")
def pg() -> Iterator[Postgres]:
    with postgres() as server:
        yield server


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[Backend]:
    found = Backend(tmp_path / "git")
    found.start()
    try:
        yield found
    finally:
        found.stop()


def replicas(stack: ExitStack, tmp: Path, backend: Backend, pg: Postgres, poll: float) -> list[Replica]:
    made = []
    for name in ("a", "b"):
        replica = Replica(tmp, name, backend.url, pg.url, poll)
        stack.callback(replica.service.stop)
        made.append(replica)
    started = lambda: all(r.rounds("start") >= 1 and r.events("cluster-joined") for r in made)  # noqa: E731
    eventually(started, what="the start's rounds over, both listening")
    return made


def within(seconds: float, probe: Any, what: str) -> float:
    """How long `probe` took to hold; fails past `seconds`."""
    started = time.monotonic()
    eventually(probe, seconds=seconds, what=what)
    return time.monotonic() - started


@pytest.mark.slow
def test_a_webhook_on_one_instance_reaches_the_other_within_a_second(
    tmp_path: Path, backend: Backend, pg: Postgres
) -> None:
    cli = seeded(tmp_path, backend)
    with ExitStack() as stack:
        a, b = replicas(stack, tmp_path, backend, pg, poll=3600)
        cli.run("decide", "render on the server", "--why", "a fast first paint")
        cli.run("sync")
        body = push_body(cli.head())
        assert a.deliver(body, signed("github", body)).status_code == 202
        took = within(1.0, lambda: "render on the server" in b.texts(), "the decision on b")
        assert b.rounds("announced") >= 1 and b.rounds("poll") == 0, f"b fetched on {took:.2f} s"


@pytest.mark.slow
def test_a_write_on_one_instance_reaches_the_other_within_a_second(
    tmp_path: Path, backend: Backend, pg: Postgres
) -> None:
    seeded(tmp_path, backend)
    with ExitStack() as stack:
        a, b = replicas(stack, tmp_path, backend, pg, poll=3600)
        a.post("written on a")
        within(1.0, lambda: "written on a" in b.texts(), "a's write on b")
        assert b.rounds("announced") >= 1 and b.rounds("poll") == 0


@pytest.mark.slow
def test_one_instance_polls_and_the_other_takes_over_when_it_is_killed(
    tmp_path: Path, backend: Backend, pg: Postgres
) -> None:
    seeded(tmp_path, backend)
    with ExitStack() as stack:
        group = replicas(stack, tmp_path, backend, pg, poll=1)
        eventually(lambda: any(r.events("cluster-leader") for r in group), what="a leader")
        time.sleep(4 * TRY_S)  # a few polls, and a few tries of the lock by the other
        (leader,) = [r for r in group if r.events("cluster-leader")]
        (other,) = [r for r in group if r is not leader]
        assert leader.rounds("poll") >= 2 and other.rounds("poll") == 0
        leader.service.stop(signal.SIGKILL)
        within(TRY_S + 2.0, lambda: other.events("cluster-leader"), "the other leading")
        eventually(lambda: other.rounds("poll") >= 1, seconds=5, what="the other polling")


@pytest.mark.slow
def test_postgres_stopped_every_instance_polls_alone_and_back_one_leads_again(
    tmp_path: Path, backend: Backend
) -> None:
    seeded(tmp_path, backend)
    with postgres() as own, ExitStack() as stack:  # a server of this test's own, stopped in it
        group = replicas(stack, tmp_path, backend, own, poll=1)
        eventually(lambda: any(r.events("cluster-leader") for r in group), what="a leader")
        (other,) = [r for r in group if not r.events("cluster-leader")]
        own.stop()
        eventually(lambda: all(r.events("cluster-unreachable") for r in group), what="both cut off")
        polled = other.rounds("poll")
        eventually(lambda: other.rounds("poll") >= polled + 2, seconds=10, what="the follower polling alone")
        own.start()
        eventually(
            lambda: all(len(r.events("cluster-joined")) >= 2 for r in group), seconds=20, what="rejoined"
        )
        eventually(lambda: sum(len(r.events("cluster-leader")) for r in group) >= 2, what="a leader again")
        time.sleep(3 * TRY_S)
        polls = [r.rounds("poll") for r in group]
        time.sleep(4 * TRY_S)
        grew = [r.rounds("poll") > before for r, before in zip(group, polls, strict=True)]
        assert grew.count(True) == 1, f"exactly one instance polls again: {grew}"
