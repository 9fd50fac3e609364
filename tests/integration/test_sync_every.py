"""`self sync` with no remote named syncs every remote, and again those left behind, so the
remotes end on the local head; a remote that fails does not stop the others."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from service.adapters.store import Store
from service.adapters.sync import Summary, UnknownRemote, clone, remotes, sync
from service.adapters.sync.every import Round, sync_every, sync_selected
from tests.support.sync_support import FAST, append, bare, event_ids, git, new_store, remote_ids, track


def pair(root: Path) -> tuple[Store, Store, Path, Path]:
    """Replicas A and B, both with remotes x and y (bare repositories by path), in step."""
    x, y = bare(root / "x.git"), bare(root / "y.git")
    a = new_store(root / "a")
    remotes.add(a.repo, str(x), "x")
    remotes.add(a.repo, str(y), "y")
    sync_every(a, FAST)
    b, _ = clone(str(x), root / "b", FAST)
    track(b)
    remotes.remove(b.repo, "origin")
    remotes.add(b.repo, str(x), "x")
    remotes.add(b.repo, str(y), "y")
    sync_every(b, FAST)
    return a, b, x, y


def head_of(path: Path) -> str:
    return git("rev-parse", "main", cwd=path).strip()


def test_a_remote_behind_after_the_pass_is_synced_again(tmp_path: Path) -> None:
    a, b, x, y = pair(tmp_path)
    theirs = append(b, 2, text="b")
    sync(b, "y", FAST)  # published on y only
    done = sync_every(a, FAST)
    assert [s.remote for s in done.syncs] == ["x", "y", "x"]  # x was behind once y brought b's events
    assert done.pulled == 2 and not done.failed
    assert head_of(x) == head_of(y) == done.head == a.head()
    assert {e.id for e in theirs} <= set(remote_ids(x))


def test_diverged_publications_settle_on_one_merge_everywhere(tmp_path: Path) -> None:
    a, b, x, y = pair(tmp_path)
    append(a, 3, text="a")
    sync(a, "y", FAST)  # a's events published on y
    append(b, 3, text="b")
    sync(b, "x", FAST)  # b's on x: the two published histories diverge
    first = sync_every(a, FAST)
    assert any(s.merged for s in first.syncs)
    assert head_of(x) == head_of(y) == a.head()
    second = sync_every(b, FAST)
    assert not any(s.merged for s in second.syncs)  # b only fast-forwards to the merge
    assert head_of(x) == head_of(y) == a.head() == b.head()
    ids = Counter(remote_ids(x))
    assert set(ids.values()) == {1} and Counter(remote_ids(y)) == ids
    assert Counter(event_ids(a)) == Counter(event_ids(b)) == ids


def test_a_failing_remote_is_reported_and_the_others_still_sync(tmp_path: Path) -> None:
    a, _, x, y = pair(tmp_path)
    remotes.add(a.repo, str(tmp_path / "gone.git"), "w")
    mine = append(a, 1, text="a")
    done = sync_every(a, FAST)
    assert [f.remote for f in done.failed] == ["w"]
    assert "does not exist" in done.failed[0].error
    assert {e.id for e in mine} <= set(remote_ids(x)) & set(remote_ids(y))


def test_one_remote_or_a_named_one_gives_one_summary(tmp_path: Path) -> None:
    a = new_store(tmp_path / "a")
    with pytest.raises(UnknownRemote, match="no remote yet") as none:
        sync_selected(a, None, FAST)
    assert none.value.code == "no-remote"  # the CLI's hint for it names `self remote add`
    remotes.add(a.repo, str(bare(tmp_path / "only.git")), "only")
    assert isinstance(sync_selected(a, None, FAST), Summary)  # the one remote, whatever its name
    remotes.add(a.repo, str(bare(tmp_path / "more.git")), "more")
    assert isinstance(sync_selected(a, "only", FAST), Summary)
    assert isinstance(sync_selected(a, None, FAST), Round)
