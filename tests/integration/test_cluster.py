"""The cluster adapter on a real PostgreSQL server (tests/support/postgres.py): one instance's
announcement reaches the others and not itself; exactly one of several holds the leader's
lock, and another takes it once the leader leaves; the server stopped: announcements skipped
with a log line, nobody leads and every instance works alone; the server back: the instances
join again on their own, each called back once for every workspace, and one leads."""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest

from service.adapters.cluster import Announcement, Cluster
from service.server.api import logs
from service.server.api.config import Logging
from tests.support.postgres import Postgres, postgres

TRY_S = 0.2


class Lines(io.StringIO):
    """A log stream the cluster's threads write to: its JSON lines, by event."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            return super().write(text)

    def events(self, name: str) -> list[dict[str, Any]]:
        with self._lock:
            lines = [json.loads(line) for line in self.getvalue().splitlines() if line.strip()]
        return [line for line in lines if line.get("event") == name]


class Member:
    def __init__(self, url: str) -> None:
        self.lines = Lines()
        self.heard: list[Announcement] = []
        self.cluster = Cluster(url, logs.logger(Logging(), self.lines), try_s=TRY_S)
        self.cluster.start(self.heard.append)


def eventually(probe: Callable[[], object], seconds: float = 10.0, what: str = "") -> None:
    deadline = time.monotonic() + seconds
    while not probe():
        assert time.monotonic() < deadline, f"not within {seconds} s: {what}"
        time.sleep(0.02)


@pytest.fixture(scope="module")
def pg() -> Iterator[Postgres]:
    with postgres() as server:
        yield server


@contextmanager
def members(url: str, n: int) -> Iterator[list[Member]]:
    with ExitStack() as stack:
        made = []
        for _ in range(n):
            member = Member(url)
            stack.callback(member.cluster.stop)
            made.append(member)
        eventually(lambda: all(m.cluster.connected for m in made), what="every member connected")
        yield made


def test_an_announcement_reaches_the_others_within_a_second_and_not_its_sender(pg: Postgres) -> None:
    with members(pg.url, 3) as (a, b, c):
        time.sleep(TRY_S * 2)  # every member listens
        sent = time.monotonic()
        a.cluster.announce("acme", "c0ffee")
        eventually(lambda: b.heard and c.heard, seconds=1.0, what="b and c heard a's announcement")
        assert time.monotonic() - sent < 1.0
        assert b.heard == c.heard == [Announcement("acme", "c0ffee", a.cluster.instance)]
        time.sleep(TRY_S * 2)
        assert a.heard == []


def test_exactly_one_leads_and_another_takes_over_when_it_leaves(pg: Postgres) -> None:
    with members(pg.url, 3) as group:
        eventually(lambda: any(m.cluster.leading for m in group), what="a leader")
        time.sleep(TRY_S * 5)  # the others have tried the lock several times
        leaders = [m for m in group if m.cluster.leading]
        assert len(leaders) == 1
        assert [m.cluster.polls() for m in group] == [m is leaders[0] for m in group]
        assert len(leaders[0].lines.events("cluster-leader")) == 1
        leaders[0].cluster.stop()
        rest = [m for m in group if m is not leaders[0]]
        left = time.monotonic()
        eventually(lambda: sum(m.cluster.leading for m in rest) == 1, seconds=3, what="a new leader")
        assert time.monotonic() - left < 3 * TRY_S + 1.0
        time.sleep(TRY_S * 3)
        assert sum(m.cluster.leading for m in rest) == 1


@pytest.mark.slow
def test_the_server_stopped_then_back_every_instance_recovers_on_its_own() -> None:
    with postgres() as server, members(server.url, 2) as (a, b):
        eventually(lambda: a.cluster.leading or b.cluster.leading, what="a leader")
        server.stop()
        eventually(lambda: not a.cluster.connected and not b.cluster.connected, what="both cut off")
        assert a.cluster.polls() and b.cluster.polls()  # each works alone meanwhile
        assert a.lines.events("cluster-unreachable") and b.lines.events("cluster-unreachable")
        a.cluster.announce("acme", "feed")
        eventually(lambda: a.lines.events("cluster-announce-skipped"), what="the announcement skipped")
        (skipped,) = a.lines.events("cluster-announce-skipped")
        assert skipped["workspace"] == "acme" and skipped["commit"] == "feed"
        server.start()
        eventually(lambda: a.cluster.connected and b.cluster.connected, seconds=15, what="both back")
        eventually(lambda: a.cluster.leading != b.cluster.leading, what="one leader again")
        catch_up = Announcement(None, None, a.cluster.instance)
        assert catch_up in a.heard  # what was announced meanwhile is fetched
        b.heard.clear()
        time.sleep(TRY_S * 2)
        a.cluster.announce("acme", "beef")
        again = Announcement("acme", "beef", a.cluster.instance)
        eventually(lambda: again in b.heard, what="b heard a again")
