"""The PostgreSQL identity adapter against a real server: its schema versioned and migrated once
when instances start together, a newer schema refused, and a server that goes away answered as
unavailable (never as an allow or a refusal) until it is back, without a new adapter."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import psycopg
import pytest

from service.adapters.auth import migrations
from service.adapters.auth.errors import IdentityNewer, IdentityUnavailable, NotAuthenticated
from service.adapters.auth.postgres import PgIdentity
from tests.support.identity_db import fresh_database
from tests.support.postgres import Postgres, postgres


@pytest.fixture(scope="module")
def server() -> Iterator[Postgres]:
    with postgres() as pg:
        yield pg


def _versions(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        return [row[0] for row in conn.execute("SELECT version FROM selfhub_schema ORDER BY version")]


def test_instances_starting_together_migrate_once(server: Postgres) -> None:
    url = fresh_database(server)
    instances = [PgIdentity(url) for _ in range(6)]
    failures: list[BaseException] = []
    start = threading.Barrier(len(instances))

    def dial(identity: PgIdentity) -> None:
        start.wait()
        try:
            identity.check()
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=dial, args=(each,)) for each in instances]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for each in instances:
        each.close()
    assert failures == []
    assert _versions(url) == list(range(1, migrations.SCHEMA + 1))


def test_a_newer_schema_is_refused_with_a_clear_line(server: Postgres) -> None:
    url = fresh_database(server)
    with PgIdentity(url) as identity:
        identity.check()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO selfhub_schema (version) VALUES (%s)", [migrations.SCHEMA + 1])
    with PgIdentity(url) as identity, pytest.raises(IdentityNewer) as raised:
        identity.users()
    assert raised.value.code == "format-newer"
    assert f"schema {migrations.SCHEMA + 1}, newer than this release reads ({migrations.SCHEMA})" in str(
        raised.value
    )


@pytest.mark.slow
def test_a_server_away_is_unavailable_and_its_return_is_picked_up() -> None:
    with postgres() as pg, PgIdentity(pg.url) as identity:
        identity.add_user("ann")
        token = identity.create_token("ann", "team", "reader").token
        assert identity.authenticate(token).user == "ann"
        pg.stop()
        for _ in range(2):  # the dropped connection, then a dial that is refused
            with pytest.raises(IdentityUnavailable) as raised:
                identity.authenticate(token)
        assert raised.value.code == "identity-unavailable"
        assert "retry in" in str(raised.value)
        with pytest.raises(NotAuthenticated):  # a malformed token needs no database
            identity.authenticate("shb_short")
        pg.start()
        assert identity.authenticate(token).user == "ann"


def test_a_thread_that_ends_leaves_no_connection_open(server: Postgres) -> None:
    url = fresh_database(server)

    def held() -> int:
        with psycopg.connect(url) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()
        return int(row[0]) if row else 0

    with PgIdentity(url) as identity:
        identity.add_user("ann")
        for _ in range(12):  # a worker pool's threads come and go
            thread = threading.Thread(target=identity.users)
            thread.start()
            thread.join()
        assert settled(held, lambda n: n <= 2)  # this thread's, and at most one not yet collected
    assert settled(held, lambda n: n == 0)


def settled(count: Callable[[], int], good: Callable[[int], bool]) -> bool:
    """`count()` is good within 10 s: a backend leaves pg_stat_activity a moment after its client
    closed the connection (later on a loaded machine)."""
    deadline = time.monotonic() + 10
    while not good(count()):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
