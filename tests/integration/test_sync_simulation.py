"""The simulation: 3–5 replicas and one bare remote under random schedules.

Every replica's clock is off by its own offset (SELF_CLOCK_OFFSET_MS, up to 10 hours either
way, often a few seconds), and a step can move it. Steps are appends (to two logs), syncs,
syncs whose push loses a race (another replica appends and pushes between the commit and
the push), crashes at every step of a sync (after the fetch, after the local commit, after
the push, in the middle of the checkout), clock jumps, and plain-git merges pushed to the
remote (conflict markers and a repeated event). Afterwards every replica syncs twice with
no new writes, and then: every replica holds byte-identical files and identical folded
state (the caches agree with a refold), every event ever appended — its bytes, not just
its id, so two writers minting one id would show — is present exactly once on the remote
and everywhere, and so is every event acknowledged by a successful sync.

SELF_SYNC_SCHEDULES sets how many schedules run (default 60; CI runs 250).
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.repo import Repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.adapters.store import Store, gitcommit
from service.adapters.store import store as store_module
from service.adapters.sync import Options, clone, logs, remotes, sync
from service.core.events.events import canonical
from tests.support.eventcheck import checked_tempdir
from tests.support.sync_support import (
    append,
    clock_offset,
    event_ids,
    event_lines,
    files,
    folded,
    new_store,
    remote_ids,
    remote_lines,
)

SCHEDULES = int(os.environ.get("SELF_SYNC_SCHEDULES", "60"))
LOGS = ("app", "web")
MAIN = b"refs/heads/main"
QUICK = Options(tries=20, timeout=10, pause=0.0005, max_pause=0.002)
HOUR_MS = 3600 * 1000
# Clock offsets: a few seconds (ids from the same moment meet), or hours. The spread stays
# under the 24 h an id from elsewhere may be ahead, so every event must still travel.
OFFSETS = st.one_of(st.integers(-5000, 5000), st.integers(-10 * HOUR_MS, 10 * HOUR_MS))


class Crash(Exception):
    """A process dying between two steps of a sync."""


def steps(replicas: int) -> st.SearchStrategy[tuple[object, ...]]:
    r = st.integers(0, replicas - 1)
    return st.one_of(
        st.tuples(st.just("append"), r, st.sampled_from(LOGS), st.integers(1, 3)),
        st.tuples(st.just("sync"), r),
        st.tuples(st.just("race"), r, r),
        st.tuples(st.just("crash"), r, st.sampled_from(["fetched", "committed", "pushed", "checkout"])),
        st.tuples(st.just("garble"), r),
        st.tuples(st.just("skew"), r, OFFSETS),
    )


@st.composite
def schedules(draw: st.DrawFn) -> tuple[int, list[tuple[object, ...]]]:
    replicas = draw(st.integers(3, 5))
    offsets = draw(st.lists(OFFSETS, min_size=replicas, max_size=replicas))
    return replicas, [("skew", n, ms) for n, ms in enumerate(offsets)] + draw(
        st.lists(steps(replicas), min_size=1, max_size=25)
    )


class World:
    def __init__(self, root: Path, replicas: int) -> None:
        self.root = root
        self.remote = root / "remote.git"
        self.offsets = [0] * replicas
        Repo.init_bare(str(self.remote), mkdir=True).close()
        first = new_store(root / "r0")
        remotes.add(first.repo, str(self.remote))
        sync(first, options=QUICK)
        self.stores = [first]
        for n in range(1, replicas):
            self.stores.append(clone(str(self.remote), root / f"r{n}", QUICK)[0])
        self.appended: list[bytes] = []
        self.acknowledged: set[bytes] = set()

    def close(self) -> None:
        for store in self.stores:
            store.close()

    @contextlib.contextmanager
    def clock(self, n: int) -> Iterator[None]:
        """What replica n does runs on its own clock."""
        with clock_offset(self.offsets[n]):
            yield

    def skew(self, n: int, ms: int) -> None:
        self.offsets[n] = ms

    def append(self, n: int, log: str, count: int) -> None:
        with self.clock(n):
            self.appended += [canonical(e) for e in append(self.stores[n], count, log=log, text=f"r{n}")]

    def sync(self, n: int, options: Options = QUICK) -> None:
        store = self.stores[n]
        with self.clock(n):
            sync(store, options=options)
        self.acknowledge(store)  # the remote holds all of it now

    def acknowledge(self, store: Store) -> None:
        self.acknowledged |= {line for line in event_lines(store) if logs.line_id(line) is not None}

    def race(self, n: int, other: int) -> None:
        def hook(point: str) -> None:
            if point == "committed" and not raced:
                raced.append(True)
                self.append(other, "app", 1)
                self.sync(other)  # pushes first: n's push is rejected and retried

        raced: list[bool] = []
        if n == other:
            return self.sync(n)
        self.sync(n, Options(tries=QUICK.tries, timeout=10, pause=0.0005, max_pause=0.002, hook=hook))

    def crash(self, n: int, point: str) -> None:
        store = self.stores[n]

        def hook(at: str) -> None:
            if at == point:
                raise Crash(at)

        real = store_module.Store._materialize
        if point == "checkout":  # the files are written, the index and the mark are not

            def half(self: Store, commit: bytes) -> list[str]:
                original = gitcommit.update_index
                gitcommit.update_index = _raise  # type: ignore[assignment]
                try:
                    return real(self, commit)
                finally:
                    gitcommit.update_index = original

            store_module.Store._materialize = half  # type: ignore[method-assign]
        try:
            with self.clock(n):
                sync(store, options=Options(tries=QUICK.tries, timeout=10, hook=hook))
        except Crash:
            pass
        else:
            self.acknowledge(store)  # no crash point was reached: a plain sync
        finally:
            store_module.Store._materialize = real  # type: ignore[method-assign]
        store.close()
        self.stores[n] = Store.open(store.root)  # a new process: finishes a half checkout

    def garble(self, n: int) -> None:
        """Someone merges with plain git and pushes: conflict markers and a repeated event
        land at the end of the remote's `app` log (later syncs must repair it)."""
        with Repo(str(self.remote)) as repo:
            head = repo.refs[MAIN]
            tree = gitcommit.tree_files(repo, head)
            paths = sorted(p for p in tree if p.startswith("projects/app/log/"))
            if not paths:
                return
            data = gitcommit.blob_data(repo, tree[paths[-1]])
            if not data:
                return
            first = data.split(b"\n", 1)[0] + b"\n"
            damaged = b"<<<<<<< HEAD\n" + data + first + b"=======\n>>>>>>> theirs\n"
            commit = gitcommit.build_commit(repo, {paths[-1]: damaged}, "merged by hand", head)
            repo.refs.set_if_equals(MAIN, head, commit)

    def settle(self) -> None:
        for _ in range(2):
            for n in range(len(self.stores)):
                self.sync(n)


def _raise(*args: object, **kwargs: object) -> None:
    raise Crash("checkout")


def run(replicas: int, schedule: list[tuple[object, ...]]) -> None:
    with checked_tempdir() as folder:
        world = World(Path(folder), replicas)
        try:
            for step in schedule:
                kind, *args = step
                getattr(world, str(kind))(*args)
            world.settle()
            check(world)
        finally:
            world.close()


def check(world: World) -> None:
    first = world.stores[0]
    expected_files, expected_state = files(first), folded(first)
    on_remote = Counter(remote_ids(world.remote))
    assert all(count == 1 for count in on_remote.values()), "an event is on the remote twice"
    for store in world.stores:
        assert files(store) == expected_files, f"{store.root.name} holds other bytes"
        assert folded(store) == expected_state, f"{store.root.name} folds to another state"
        assert Counter(event_ids(store)) == on_remote
        assert store.head() == first.head()
    lines = Counter(line for line in remote_lines(world.remote) if logs.line_id(line) is not None)
    assert all(lines[line] == 1 for line in world.appended), "an appended event was lost or replaced"
    assert all(lines[line] == 1 for line in world.acknowledged), "an acknowledged event was lost"


@pytest.mark.slow
@settings(
    max_examples=SCHEDULES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=False,
)
@given(schedules())
def test_random_schedules_converge_and_lose_nothing(case: tuple[int, list[tuple[object, ...]]]) -> None:
    replicas, schedule = case
    run(replicas, schedule)


def test_replicas_behind_a_fast_clock_keep_every_event() -> None:
    """One clock 5 s ahead writes and syncs; the others fetch it and each write 2; all sync."""
    run(
        3,
        [
            ("skew", 0, 5000),
            ("append", 0, "app", 1),
            ("sync", 0),
            ("sync", 1),
            ("sync", 2),
            ("append", 1, "app", 2),
            ("append", 2, "app", 2),
        ],
    )


def test_a_schedule_with_every_kind_of_step() -> None:
    """One fixed schedule through every step, so a failure here is easy to read."""
    run(
        4,
        [
            ("append", 0, "app", 2),
            ("append", 1, "web", 1),
            ("race", 1, 2),
            ("crash", 0, "committed"),
            ("append", 3, "app", 3),
            ("crash", 3, "checkout"),
            ("crash", 2, "pushed"),
            ("crash", 1, "fetched"),
            ("garble", 0),
            ("append", 2, "app", 1),
            ("crash", 2, "committed"),
            ("sync", 0),
        ],
    )
