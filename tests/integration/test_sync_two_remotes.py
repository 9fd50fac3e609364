"""Two remotes: history published to one must never be rewritten by a sync with the other.

Replicas A and B both sync with remotes X and Y (bare repositories by path). When their
published histories diverge, a sync pushes the deterministic merge of the two heads; the
other remote then receives it as a fast-forward, and both remotes and both replicas end on
the same commit, with every event once.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from dulwich.objects import Commit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.adapters.store import Store, gitcommit
from service.adapters.sync import Options, Summary, clone, sync
from service.adapters.sync.merge import IDENTITY, MESSAGE
from tests.support.sync_support import (
    FAST,
    World,
    append,
    close_all,
    files,
    remote_ids,
    track,
)


def commit_of(store: Store, summary: Summary) -> Commit:
    """The commit a sync left `store` on."""
    commit = store.repo[summary.head.encode()]  # type: ignore[union-attr]
    assert isinstance(commit, Commit)
    return commit


def test_diverged_published_histories_merge_and_cross_as_fast_forwards(tmp_path: Path) -> None:
    w = World(tmp_path)
    mine = append(w.a, 3, text="a")
    assert w.sync(w.a, "x").pushed == 3
    theirs = append(w.b, 2, text="b")
    assert w.sync(w.b, "y").pushed == 2
    head_x, head_y = w.a.head(), w.b.head()

    crossed = w.sync(w.a, "y")  # A's events are on X: they are published, so no rebase
    assert crossed.merged and (crossed.pulled, crossed.pushed) == (2, 3)
    commit = commit_of(w.a, crossed)
    assert commit.parents == sorted([head_x.encode(), head_y.encode()])  # type: ignore[union-attr]
    assert (commit.author, commit.message) == (IDENTITY, MESSAGE)

    forward = w.sync(w.a, "x")  # X gets the merge as a fast-forward
    assert not forward.merged and (forward.pulled, forward.pushed) == (0, 2)
    assert forward.head == crossed.head
    assert w.sync(w.b, "x").pulled == 3  # B fast-forwards to the merge
    assert w.sync(w.b, "y").pushed == 0
    w.settled()
    assert {e.id for e in mine + theirs} <= set(remote_ids(w.x))


def test_two_replicas_merging_the_same_heads_make_the_same_commit(tmp_path: Path) -> None:
    w = World(tmp_path)
    w.diverge(2, 4)
    by_b = w.sync(w.b, "x")  # B merges its Y history into X
    by_a = w.sync(w.a, "y")  # A merges its X history into Y, independently
    assert by_a.merged and by_b.merged
    assert by_a.head == by_b.head
    assert w.sync(w.a, "x").head == w.sync(w.b, "y").head == by_a.head
    w.settled()


def test_unpublished_events_on_top_are_carried_by_the_merge(tmp_path: Path) -> None:
    w = World(tmp_path)
    append(w.a, 2, text="a published")
    w.sync(w.a, "x")
    later = append(w.a, 1, text="a not yet published")
    append(w.b, 2, text="b")
    w.sync(w.b, "y")
    local = w.a.head()
    merged = w.sync(w.a, "y")
    assert merged.merged and merged.pushed == 3
    commit = commit_of(w.a, merged)
    assert local is not None
    assert local.encode() in commit.parents  # the merge is of the local head as it was
    assert later[0].id in remote_ids(w.y)
    w.catch_up()


def test_unpublished_local_events_are_still_rebased(tmp_path: Path) -> None:
    """With nothing published elsewhere, two remotes change nothing: one commit on the remote's head."""
    w = World(tmp_path)
    append(w.b, 2, text="b")
    w.sync(w.b, "y")
    append(w.a, 1, text="a")
    summary = w.sync(w.a, "y")
    assert not summary.merged and (summary.pulled, summary.pushed) == (2, 1)
    assert len(commit_of(w.a, summary).parents) == 1
    w.catch_up()


def test_a_rejected_merge_push_merges_the_same_local_head_again(tmp_path: Path) -> None:
    w = World(tmp_path)
    w.diverge()
    local = w.a.head()
    raced: list[Summary] = []

    def race(point: str) -> None:
        if point == "committed" and not raced:  # B pushes to Y between A's merge and its push
            append(w.b, 1, text="b again")
            raced.append(sync(w.b, "y", FAST))

    opts = Options(tries=8, timeout=5, pause=0.01, max_pause=0.05, hook=race)
    summary = sync(w.a, "y", opts)
    assert summary.merged and summary.retries == 1
    commit = commit_of(w.a, summary)
    assert local is not None
    assert sorted(commit.parents) == sorted([local.encode(), raced[0].head.encode()])  # type: ignore[union-attr]
    w.catch_up()


@pytest.mark.parametrize("point", ["committed", "pushed"])
def test_a_crash_around_the_merge_push_loses_nothing(tmp_path: Path, point: str) -> None:
    """Before the push nothing local changed; after it the remote holds the merge and the
    local head is still the old one, which the next sync fast-forwards."""
    w = World(tmp_path)
    w.diverge()
    local, before = w.a.head(), files(w.a)

    def crash(at: str) -> None:
        if at == point:
            raise KeyboardInterrupt("power cut")

    with pytest.raises(KeyboardInterrupt):
        sync(w.a, "y", Options(tries=1, timeout=5, hook=crash))
    assert w.a.head() == local and files(w.a) == before
    w.a.close()
    w.a = track(Store.open(w.a.root))
    again = w.sync(w.a, "y")
    assert again.merged == (point == "committed")
    w.catch_up()


def test_a_local_append_while_the_merge_is_pushed_goes_after_it(tmp_path: Path) -> None:
    w = World(tmp_path)
    w.diverge()
    late: list[str] = []

    def write(at: str) -> None:
        if at == "pushed" and not late:  # the merge is on Y; the local head moves before its checkout
            late.extend(e.id for e in append(w.a, 1, text="written meanwhile"))

    summary = sync(w.a, "y", Options(tries=8, timeout=5, pause=0.01, max_pause=0.05, hook=write))
    assert summary.merged and summary.pushed == 1  # the late event, on top of the merge
    head = commit_of(w.a, summary)
    assert len(head.parents) == 1
    merge_commit = w.a.repo[head.parents[0]]
    assert isinstance(merge_commit, Commit) and merge_commit.message == MESSAGE
    assert late[0] in remote_ids(w.y)
    w.catch_up()


def test_the_summary_reports_the_merge_in_json(tmp_path: Path) -> None:
    import msgspec

    w = World(tmp_path)
    w.diverge(1, 1)
    data = msgspec.to_builtins(w.sync(w.a, "y"))
    assert data["merged"] is True
    assert gitcommit.head(w.a.repo) == data["head"].encode()


# --- random schedules over two remotes ---------------------------------------------------------


@st.composite
def two_remote_schedules(draw: st.DrawFn) -> list[tuple[str, int, str]]:
    step = st.tuples(st.sampled_from(["append", "sync"]), st.integers(0, 2), st.sampled_from(["x", "y"]))
    return draw(st.lists(step, min_size=1, max_size=20))


@pytest.mark.slow
@settings(
    max_examples=int(os.environ.get("SELF_SYNC_SCHEDULES", "60")) // 3 or 1,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(schedule=two_remote_schedules())
def test_random_schedules_over_two_remotes_settle_on_one_commit(schedule: list[tuple[str, int, str]]) -> None:
    """Three replicas, each syncing with either remote at random: every push is a fast-forward.
    A replica that syncs with X, Y and X again leaves both remotes on its head; once each has
    done so, syncing with both changes nothing but the replicas' own heads, and one commit
    holds every event once."""
    with tempfile.TemporaryDirectory() as folder:
        w = World(Path(folder))
        try:
            c = w.join(track(clone(str(w.y), Path(folder) / "c", FAST)[0]), "x")
            stores = [w.a, w.b, c]
            written: set[str] = set()
            for kind, n, name in schedule:
                if kind == "append":
                    written |= {e.id for e in append(stores[n], 1, text=f"r{n}")}
                else:
                    w.sync(stores[n], name)
            for store in stores:  # x, y, x: the two remotes end on this replica's head
                for name in ("x", "y", "x"):
                    w.sync(store, name)
            for store in stores:
                for name in ("x", "y"):
                    assert not w.sync(store, name).merged
            w.settled()
            assert c.head() == w.a.head() and files(c) == files(w.a)
            assert written <= set(remote_ids(w.x))
        finally:
            close_all()
