"""The store's commits as C git reads them: every object, the reflog of main, a main that
moved meanwhile, a main that git packed."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from dulwich.reflog import read_reflog
from dulwich.repo import Repo

from service.adapters.store import Store, gitcommit
from service.adapters.store.errors import RefMoved
from tests.integration.test_store import append_n
from tests.support.sync_support import git


def test_git_reads_every_object_and_keeps_a_reflog_of_every_move(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    heads = [store.head()]
    for _ in range(4):
        append_n(store, 3)
        heads.append(store.head())
    store.close()
    git("fsck", "--strict", "--no-dangling", cwd=tmp_path)
    assert git("rev-parse", "refs/heads/main", cwd=tmp_path).strip() == heads[-1]
    with open(tmp_path / ".git" / "logs" / "refs" / "heads" / "main", "rb") as log:
        entries = list(read_reflog(log))
    moves = [(e.old_sha.decode(), e.new_sha.decode()) for e in entries[-4:]]
    assert moves == list(itertools.pairwise(heads))
    assert all(e.message.startswith(b"commit: append: 3 events") for e in entries[-4:])
    assert git("reflog", "show", "--format=%H", "main", cwd=tmp_path).split()[:5] == heads[::-1]


def test_main_that_moved_meanwhile_is_not_moved_and_nothing_is_logged(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    append_n(store, 1)
    before = store.head()
    assert before is not None
    reflog = (tmp_path / ".git" / "logs" / "refs" / "heads" / "main").read_bytes()
    repo = Repo(str(tmp_path))
    new = gitcommit.build_commit(repo, {"projects/app/notes.txt": b"x\n"}, "other", before.encode())
    stale = "0" * 39 + "1"
    with pytest.raises(RefMoved):
        gitcommit.move_branch(repo, stale.encode(), new, "other")  # type: ignore[arg-type]
    assert store.head() == before
    assert not (tmp_path / ".git" / "refs" / "heads" / "main.lock").exists()
    assert (tmp_path / ".git" / "logs" / "refs" / "heads" / "main").read_bytes() == reflog
    store.close()


def test_a_packed_main_is_read_and_moved(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    append_n(store, 2)
    git("pack-refs", "--all", "--prune", cwd=tmp_path)
    assert not (tmp_path / ".git" / "refs" / "heads" / "main").exists()
    packed = git("rev-parse", "refs/heads/main", cwd=tmp_path).strip()
    assert store.head() == packed
    written = append_n(store, 1)
    assert store.head() == git("rev-parse", "refs/heads/main", cwd=tmp_path).strip() != packed
    assert [e.id for e in store.read("app").events][-1] == written[0].id
    git("fsck", "--strict", "--no-dangling", cwd=tmp_path)
    store.close()
