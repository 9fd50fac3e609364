"""Two processes appending at once lose and interleave nothing; the lock and the clock."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import msgspec
import pytest
from dulwich.object_store import tree_lookup_path
from dulwich.objects import Blob, Commit
from dulwich.repo import Repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.adapters.store import Store, StoreLocked
from service.core.events import ids
from service.core.events.events import Assertion, Event, Origin, make
from service.core.fold.fold import fold_all

ROOT = Path(__file__).resolve().parents[2]
ORIGIN = Origin("agent", False)

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from service.core.events.events import Assertion, Origin, make
    from service.adapters.store import Store

    store = Store.open(Path(sys.argv[1]))
    log, name, count = sys.argv[2], sys.argv[3], int(sys.argv[4])
    Path(sys.argv[5]).touch()
    while not Path(sys.argv[6]).exists():
        pass
    for n in range(count):
        with store.transaction(log) as tx:
            event_id = tx.next_ids(1)[0]
            text = f"{name} record {n}"
            tx.append([make(event_id, tx.now(), "entity.proposed", Origin("agent", False), log,
                            Assertion(entity=event_id, text=text))])
    """
)


def run_writers(tmp_path: Path, store: Store, jobs: list[tuple[str, str]], count: int) -> None:
    """Start one process per (log, name), release them together, wait for all."""
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = []
    for n, (log, name) in enumerate(jobs):
        ready = tmp_path / f"ready-{n}"
        args = [sys.executable, "-c", WRITER, str(store.root), log, name, str(count), str(ready), str(go)]
        procs.append((subprocess.Popen(args, env=env, stderr=subprocess.PIPE), ready))
    deadline = time.monotonic() + 60
    while not all(ready.exists() for _, ready in procs) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    for proc, _ in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()


@pytest.mark.slow
def test_two_processes_appending_at_once_lose_nothing(tmp_path: Path) -> None:
    store = Store.init(tmp_path / "ws")
    run_writers(tmp_path, store, [("app", "one"), ("app", "two")], 200)
    log = store.read("app")
    assert log.quarantined == []
    assert len(log.events) == 400
    order = [e.id for e in log.events]
    assert all(a < b for a, b in itertools.pairwise(order))
    texts = {text_of(e) for e in log.events}
    assert texts == {f"{name} record {n}" for name in ("one", "two") for n in range(200)}
    assert store.state("app")[0] == fold_all(log.events)
    repo = Repo(str(store.root))
    assert sum(1 for _ in repo.get_walker()) == 401
    segment = store.root / "projects/app/log/000000.jsonl"
    commit = repo[repo.refs[b"refs/heads/main"]]
    assert isinstance(commit, Commit)
    _, blob_id = tree_lookup_path(repo.__getitem__, commit.tree, b"projects/app/log/000000.jsonl")
    blob = repo[blob_id]
    assert isinstance(blob, Blob) and blob.data == segment.read_bytes()


def test_ids_increase_across_processes_and_logs(tmp_path: Path) -> None:
    store = Store.init(tmp_path / "ws")
    run_writers(tmp_path, store, [("app", "one"), ("web", "two")], 60)
    commits = [c.commit for c in Repo(str(store.root)).get_walker()]
    assert len(commits) == 121
    by_time = sorted([e for log in ("app", "web") for e in store.read(log).events], key=lambda e: e.id)
    assert len({e.id for e in by_time}) == 120
    high = (store.root / ".local" / "clock").read_text().strip()
    assert high == by_time[-1].id
    with store.transaction("app") as tx:
        assert tx.next_ids(1)[0] > high


def text_of(event: Event) -> str:
    return msgspec.json.decode(event.payload, type=Assertion).text or ""


def test_the_lock_times_out_naming_the_file(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    other = Store.open(tmp_path, lock_timeout=0.2)
    with store.transaction("app"):
        started = time.monotonic()
        with pytest.raises(StoreLocked, match=r"\.local/lock"), other.transaction("app"):
            pass
        assert time.monotonic() - started >= 0.2
    with other.transaction("app") as tx:
        assert tx.state.events == 0


def test_the_lock_is_reentrant_within_a_store(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    from service.core.commands.config import WorkspaceConfig

    with store.transaction("app") as tx:
        store.save_config(WorkspaceConfig(context_budget=1234))
        tx.append([proposal(tx.next_ids(1)[0])])
    assert store.config().context_budget == 1234


def proposal(event_id: str, project: str = "app") -> Event:
    return make(
        event_id,
        "2026-11-30T09:57:45.069Z",
        "entity.proposed",
        ORIGIN,
        project,
        Assertion(entity=event_id, text="a record"),
    )


def test_next_ids_stay_above_the_clock_and_the_log(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    future = ids.next_id(None, 4_000_000_000_000, 0)
    (tmp_path / ".local" / "clock").write_text(future + "\n")
    with store.transaction("app") as tx:
        fresh = tx.next_ids(3)
    assert future < fresh[0] < fresh[1] < fresh[2]
    (tmp_path / ".local" / "clock").unlink()
    later = ids.next_id(None, 5_000_000_000_000, 0)
    store.import_events("app", [proposal(later)])
    with store.transaction("app") as tx:
        assert tx.next_ids(1)[0] > later


def test_import_keeps_ids_sorts_skips_known_and_commits_once(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    made = [ids.next_id(None, 1_700_000_000_000 + n, n) for n in range(5)]
    legacy = make(
        made[4],
        "2026-11-30T09:57:45.069Z",
        "goal.set",
        ORIGIN,
        "app",
        Assertion(entity=made[4], text="ship the store"),
    )
    batch = [proposal(made[2]), legacy, proposal(made[0]), proposal(made[2])]
    heads = len(list(Repo(str(tmp_path)).get_walker()))
    assert store.import_events("app", batch) == 3
    assert store.import_events("app", [proposal(made[0]), proposal(made[1])]) == 1
    assert store.import_events("app", [proposal(made[1])]) == 0
    events = store.read("app").events
    assert [e.id for e in events] == [made[0], made[2], made[4], made[1]]
    assert len(list(Repo(str(tmp_path)).get_walker())) == heads + 2
    assert (tmp_path / ".local" / "clock").read_text().strip() == made[4]
    state, _ = store.state("app")
    assert state == fold_all(events)


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    jobs=st.lists(st.sampled_from(["app", "web", ""]), min_size=2, max_size=3),
    count=st.integers(1, 25),
)
def test_ids_rise_across_processes_whatever_logs_they_write(
    tmp_path_factory: pytest.TempPathFactory, jobs: list[str], count: int
) -> None:
    """Processes writing at once, to one log or several, never issue an id twice or out of order."""
    tmp_path = tmp_path_factory.mktemp("writers")
    store = Store.init(tmp_path / "ws")
    run_writers(tmp_path, store, [(log, f"w{n}") for n, log in enumerate(jobs)], count)
    by_log = {log: [e.id for e in store.read(log).events] for log in set(jobs)}
    for log, order in by_log.items():
        assert len(order) == count * jobs.count(log)
        assert all(a < b for a, b in itertools.pairwise(order)), f"log {log!r} is out of id order"
    every = [i for order in by_log.values() for i in order]
    assert len(set(every)) == len(every)
