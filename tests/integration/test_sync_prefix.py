"""The shared full segments a sync does not read again (`service/adapters/sync/prefix.py`): what is known
of their blobs is kept in `.local/sync/segments.json`, and duplicates are still ruled out."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from service.adapters.store import Store, gitcommit
from service.adapters.sync import Options, clone, prefix, remotes, sync
from tests.support.sync_support import append, bare, new_store, remote_ids, track

FAST = Options(tries=3, timeout=5, pause=0.01, max_pause=0.05)
LOG = "projects/app/log"


def published(tmp_path: Path, events: int = 2500) -> tuple[Store, Path]:
    remote = bare(tmp_path / "remote.git")
    a = new_store(tmp_path / "a")
    append(a, events)
    remotes.add(a.repo, str(remote))
    sync(a, options=FAST)
    return a, remote


def full_blobs(store: Store) -> list[str]:
    """The blob ids of the app log's two full segments."""
    files = gitcommit.tree_files(store.repo, store.repo.refs[gitcommit.BRANCH])
    return [files[f"{LOG}/{name}"].decode() for name in ("000000.jsonl", "000001.jsonl")]


def test_a_sync_learns_the_full_segments_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, remote = published(tmp_path)
    append(a, 1)
    assert sync(a, options=FAST).pushed == 1
    memo = prefix.load(a.local_dir)
    first = full_blobs(a)[0]
    assert memo[first] == prefix.span_of((a.root / LOG / "000000.jsonl").read_bytes())

    def never(content: bytes, ids: object = None) -> None:
        raise AssertionError("a shared segment was examined again")

    monkeypatch.setattr(prefix, "span_of", never)
    new = append(a, 1)[0]
    assert not any(span.meets([new.id]) for span in memo.values())  # so no segment is read for it
    assert sync(a, options=FAST).pushed == 1
    assert collections.Counter(remote_ids(remote)).most_common(1)[0][1] == 1


def test_a_clone_and_a_publish_know_their_full_segments(tmp_path: Path) -> None:
    a, remote = published(tmp_path)
    assert set(full_blobs(a)) <= set(prefix.load(a.local_dir))
    b, _ = clone(str(remote), tmp_path / "b", FAST)
    track(b)
    assert set(full_blobs(b)) <= set(prefix.load(b.local_dir))


def test_a_local_copy_of_a_shared_event_is_not_pushed_again(tmp_path: Path) -> None:
    """A hand edit (or a plain-git merge) left a second copy of an old event in the last local
    segment: the sync pushes the new event only, and the remote holds every id once."""
    a, remote = published(tmp_path)
    old_line = (a.root / LOG / "000000.jsonl").read_bytes().splitlines(keepends=True)[10]
    new = append(a, 1)[0]
    with open(a.root / LOG / "000002.jsonl", "ab") as handle:
        handle.write(old_line)
    summary = sync(a, options=FAST)
    assert summary.pushed == 1
    ids = remote_ids(remote)
    assert new.id in ids and len(ids) == len(set(ids))


def test_a_forgotten_memo_is_rebuilt(tmp_path: Path) -> None:
    a, _ = published(tmp_path)
    (a.local_dir / prefix.MEMO).write_bytes(b"not json")
    append(a, 1)
    assert sync(a, options=FAST).pushed == 1
    assert set(full_blobs(a)) <= set(prefix.load(a.local_dir))


def test_lost_events_reads_only_what_changed_and_follows_moved_ids(tmp_path: Path) -> None:
    """The rewrite check: ids gone from the segments that changed, less those still held by a
    segment both commits share, are lost; a reordered last segment loses nothing."""
    from service.adapters.sync.plan import lost_events

    a = new_store(tmp_path / "a")
    append(a, 1010)
    first, last = ((a.root / LOG / name).read_bytes() for name in ("000000.jsonl", "000001.jsonl"))
    tail = last.splitlines(keepends=True)
    repo = a.repo
    start = repo.refs[gitcommit.BRANCH]

    def lost(base: bytes, files: dict[str, bytes]) -> set[str]:
        head = gitcommit.build_commit(repo, files, "rewrite", base)
        return lost_events(repo, base.decode(), head, gitcommit.tree_files(repo, head))

    segment = f"{LOG}/000001.jsonl"
    assert lost(start, {segment: b"".join(reversed(tail))}) == set()
    assert lost(start, {segment: b"".join(tail[:-1])}) == {tail[-1][7:33].decode()}
    # a second copy of an event of the unchanged 000000 goes from 000001: the event stays
    doubled = gitcommit.build_commit(repo, {segment: last + first.splitlines(keepends=True)[0]}, "dup", start)
    assert lost(doubled, {segment: last}) == set()
