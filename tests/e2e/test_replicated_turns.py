"""Two `self serve --replicated` instances on one git host and one PostgreSQL database
(`--identity`), writers posting on both at once for a few seconds, as real processes.

Held here: both instances make progress (neither starves behind the other's pushes: they take
turns at pushing, `adapters/cluster/turns.py`), every post is answered 201 and none waited
anywhere near the write's 30 s, every acknowledged event is once on the host and once on each
instance, and every push held its turn and lost the host's compare-and-swap at most rarely."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.e2e.test_replicas import Replica, replicas
from tests.e2e.test_replicated import on_host
from tests.e2e.test_serve_remote import HOOK_ENV, OLD_SECRET, SECRET, SLUG, WS, Backend, seeded
from tests.support.postgres import Postgres, postgres
from tests.support.serving import Service
from tests.support.sync_support import remote_ids

pytestmark = pytest.mark.slow  # two services, a PostgreSQL server and seconds of writes

WRITERS = 8
SECONDS = 6.0
STATE = f"/api/v1/workspaces/{WS}/projects/{SLUG}/state"
BOUND_S = 20.0  # a write waited at most this (the bound asserted: no write waits its turn long)


@pytest.fixture(scope="module")
def pg() -> Iterator[Postgres]:
    with postgres() as server:
        yield server


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[Backend]:
    found = Backend(tmp_path / "git")
    found.start()
    try:
        seeded(tmp_path, found)
        yield found
    finally:
        found.stop()


def replicated(replica: Replica, stack: ExitStack) -> None:
    """`replica` served again with `--replicated`, its log at debug (each push's line)."""
    replica.service.stop()
    config = replica.data.parent / "serve.toml"
    config.write_text('[logging]\nlevel = "debug"\n')
    env = replica.env | {HOOK_ENV: SECRET, HOOK_ENV + "_PREVIOUS": OLD_SECRET, "SELF_REPLICATED": "1"}
    replica.service = Service(replica.data, replica.log, config, env=env)
    stack.callback(replica.service.stop)
    replica.service.wait("/readyz")


def write_on_both(pair: list[Replica]) -> tuple[list[list[str]], list[float], list[int]]:
    """WRITERS connections, half on each instance, posting for SECONDS: the ids each instance
    acknowledged, each post's time, the statuses that were not 201."""
    acknowledged: list[list[str]] = [[], []]
    took: list[float] = []
    refused: list[int] = []
    lock = threading.Lock()
    deadline = time.monotonic() + SECONDS

    def write(w: int) -> None:
        replica = pair[w % 2]
        with replica.service.client(replica.writer) as client:
            n = 0
            while time.monotonic() < deadline:
                event = {"type": "entity.confirmed", "project": SLUG, "payload": {"text": f"w{w} n{n}"}}
                started = time.monotonic()
                answer = client.post(f"/api/v1/workspaces/{WS}/events", json={"events": [event]})
                with lock:
                    took.append(time.monotonic() - started)
                    if answer.status_code == 201:
                        acknowledged[w % 2].extend(answer.json()["ids"])
                    else:
                        refused.append(answer.status_code)
                n += 1

    threads = [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return acknowledged, took, refused


def test_two_instances_writing_at_once_both_progress_and_lose_nothing(
    tmp_path: Path, backend: Backend, pg: Postgres
) -> None:
    with ExitStack() as stack:
        pair = replicas(stack, tmp_path, backend, pg, poll=3600)
        for replica in pair:
            replicated(replica, stack)
        acknowledged, took, refused = write_on_both(pair)
        assert refused == []
        assert max(took) < BOUND_S
        a, b = (len(ids) for ids in acknowledged)
        assert min(a, b) * 4 >= max(a, b), (a, b)  # neither starves: before turns, 8 against 285
        every = acknowledged[0] + acknowledged[1]
        host = on_host(backend)
        assert len(host) == len(set(host)) and set(every) <= set(host)
        head = backend.head()
        for replica in pair:
            with replica.service.client(replica.reader) as client:  # its states hold the host's head
                answer = client.get(STATE, params={"all": "1"}, headers={"Selfhub-Min-Commit": head or ""})
            assert answer.status_code == 200, answer.text
            ids = remote_ids(replica.data / "workspaces" / WS)
            assert len(ids) == len(set(ids)) and set(every) <= set(ids)
        pushes = [line for replica in pair for line in replica.events("replicated-push")]
        assert pushes and all(line["turn"] for line in pushes)  # every push held its turn
        assert max(line["lost"] for line in pushes) <= 2, pushes  # before turns: 22 in a row
