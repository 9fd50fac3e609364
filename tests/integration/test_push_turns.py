"""`Turns` (service/adapters/cluster/turns.py) on a real PostgreSQL server: a workspace's push
turn is held by one holder at a time and the next in line gets it when it is let go, in the
order they asked; another workspace's turn is another lock; a turn not had within its wait, or
a database away, is a push without one (False), quickly."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import structlog

from service.adapters.cluster.turns import CONNECT_S, Turns
from tests.support.postgres import Postgres, postgres
from tests.support.servers import free_port

LOG = structlog.get_logger("test")


@pytest.fixture(scope="module")
def pg() -> Iterator[Postgres]:
    with postgres() as server:
        yield server


@pytest.fixture
def made() -> Iterator[list[Turns]]:
    """The turns a test makes, closed after it."""
    turns: list[Turns] = []
    yield turns
    for each in turns:
        each.close()


def hold(turns: Turns, workspace: str, order: list[str], name: str, held_s: float) -> threading.Thread:
    """A thread (a writer's) that holds `workspace`'s turn for `held_s`, noting when it has it."""

    def run() -> None:
        with turns.turn(workspace) as held:
            assert held
            order.append(f"{name} in")
            time.sleep(held_s)
            order.append(f"{name} out")

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def waiting(pg: Postgres, n: int) -> None:
    """Until `n` sessions wait for an advisory lock (as the server's `pg_locks` says)."""
    import psycopg

    deadline = time.monotonic() + 10
    with psycopg.connect(pg.url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            ).fetchone()
            if row is not None and row[0] >= n:
                return
            time.sleep(0.01)
    raise AssertionError(f"{n} sessions never waited")


def test_one_holder_at_a_time_in_the_order_asked(pg: Postgres, made: list[Turns]) -> None:
    a, b = Turns(pg.url, LOG), Turns(pg.url, LOG)  # two instances
    made += [a, b]
    order: list[str] = []
    first = hold(a, "team", order, "a1", 1.0)
    while not order:
        time.sleep(0.01)
    second = hold(b, "team", order, "b1", 0.1)
    waiting(pg, 1)
    third = hold(a, "team", order, "a2", 0.1)  # asked after b1: gets it after b1
    for thread in (first, second, third):
        thread.join(10)
    assert order == ["a1 in", "a1 out", "b1 in", "b1 out", "a2 in", "a2 out"]


def test_another_workspace_is_another_turn(pg: Postgres, made: list[Turns]) -> None:
    a, b = Turns(pg.url, LOG), Turns(pg.url, LOG)
    made += [a, b]
    order: list[str] = []
    first = hold(a, "team", order, "team", 0.5)
    time.sleep(0.1)
    started = time.monotonic()
    with b.turn("other") as held:
        assert held and time.monotonic() - started < 0.3  # not behind team's holder
    first.join(10)


def test_a_turn_not_had_within_its_wait_is_a_push_without_one(pg: Postgres, made: list[Turns]) -> None:
    a, b = Turns(pg.url, LOG), Turns(pg.url, LOG, wait_s=0.3)
    made += [a, b]
    order: list[str] = []
    first = hold(a, "team", order, "a", 1.5)
    time.sleep(0.1)
    started = time.monotonic()
    with b.turn("team") as held:
        assert not held
    assert time.monotonic() - started < 1.2
    first.join(10)
    with b.turn("team") as held:  # the same session, once the holder let go
        assert held


def test_a_database_away_is_a_push_without_a_turn_and_not_asked_again_at_once() -> None:
    turns = Turns(f"postgresql://selfhub@127.0.0.1:{free_port()}/selfhub", LOG, down_s=30)
    started = time.monotonic()
    with turns.turn("team") as held:
        assert not held
    assert time.monotonic() - started < CONNECT_S + 1
    started = time.monotonic()
    with turns.turn("team") as held:
        assert not held
    assert time.monotonic() - started < 0.05  # remembered as away
