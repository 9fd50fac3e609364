"""The deterministic symmetric merge: two replicas merging the same two heads make the same
commit, whichever side they start from, and keep every event once."""

from __future__ import annotations

from pathlib import Path

import pytest
from dulwich.client import LocalGitClient
from dulwich.objects import Commit

from service.adapters.store import Store, gitcommit
from service.adapters.sync import logs
from service.adapters.sync.identity import EventsDiffer
from service.adapters.sync.merge import IDENTITY, MESSAGE, merge, merged_lines
from tests.support.sync_support import append, new_store, track


def fetch(into: Store, source: Store) -> bytes:
    """Bring source's main into into's objects (in-process, no git binary)."""
    head = source.repo.refs[gitcommit.BRANCH]
    LocalGitClient().fetch(str(source.root), into.repo, determine_wants=lambda refs, depth=None: [head])
    return head


def test_two_replicas_make_the_same_merge_commit(tmp_path: Path) -> None:
    a = new_store(tmp_path / "a")
    append(a, 5, text="shared")
    b = track(Store.open(_copy(a.root, tmp_path / "b")))
    ours = append(a, 4, text="a")
    theirs = append(b, 3, text="b")
    head_a, head_b = a.repo.refs[gitcommit.BRANCH], b.repo.refs[gitcommit.BRANCH]
    assert head_a != head_b
    fetch(a, b)
    fetch(b, a)
    in_a = merge(a.repo, head_a, head_b)
    in_b = merge(b.repo, head_b, head_a)
    assert in_a == in_b
    assert merge(a.repo, head_b, head_a) == in_a
    commit = a.repo[in_a]
    assert isinstance(commit, Commit)
    assert commit.parents == sorted([head_a, head_b])
    assert commit.author == commit.committer == IDENTITY and commit.message == MESSAGE
    times = [a.repo[h].commit_time for h in (head_a, head_b)]  # type: ignore[attr-defined]
    assert commit.commit_time == max(times)
    files = gitcommit.tree_files(a.repo, in_a)
    data = gitcommit.blob_data(a.repo, files["projects/app/log/000000.jsonl"])
    lines = logs.lines_of(data)
    ids = [logs.line_id(line) for line in lines]
    assert len(ids) == len(set(ids)) == 12
    assert {e.id for e in ours + theirs} <= set(ids)
    tail = ids[5:]
    assert tail == sorted(tail)  # the union of the tails, in id order


def test_merged_lines_is_symmetric_and_drops_repeats() -> None:
    shared = [b'{"id":"01aaaaaaaaaaaaaaaaaaaaaaaa","n":0}\n']
    x = b'{"id":"01bbbbbbbbbbbbbbbbbbbbbbbb","n":1}\n'
    y = b'{"id":"01cccccccccccccccccccccccc","n":2}\n'
    junk = b"not an event\n"
    left = [*shared, y, x, junk, b"<<<<<<< HEAD\n"]
    right = [*shared, x, y, x]
    merged = merged_lines(left, right)
    assert merged == merged_lines(right, left)
    assert merged == [*shared, x, y, junk]


@pytest.mark.parametrize("where", ["tails", "prefix"])
def test_merged_lines_never_chooses_between_copies_in_other_bytes(where: str) -> None:
    """An edit of an event (or one id used twice) stops the merge, whichever side is ours."""
    shared = [b'{"id":"01aaaaaaaaaaaaaaaaaaaaaaaa","n":0}\n']
    x = b'{"id":"01bbbbbbbbbbbbbbbbbbbbbbbb","n":1}\n'
    y = b'{"id":"01cccccccccccccccccccccccc","n":2}\n'
    y2 = b'{"id":"01cccccccccccccccccccccccc","n":3}\n'  # the same id with other bytes
    if where == "tails":
        left, right = [*shared, y, x], [*shared, y2]
    else:  # the edited copy comes after the shared lines that hold the original
        left, right = [*shared, y, x], [*shared, y, y2]
    for ours, theirs in ((left, right), (right, left)):
        with pytest.raises(EventsDiffer, match="01cccccccccccccccccccccccc") as refused:
            merged_lines(ours, theirs)
        assert refused.value.ids == ["01cccccccccccccccccccccccc"]


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst, symlinks=True)
    return dst
