""".git/index changed in place: the bytes are the ones dulwich writes for the same update, git
sees the store clean after every write, and an index it cannot change in place is left to
dulwich untouched."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from dulwich.index import index_entry_from_stat
from dulwich.objects import Blob
from dulwich.repo import Repo

from service.adapters.store import gitindex
from service.adapters.store.gitcommit import FILE_MODE, update_index
from tests.support.sync_support import append, new_store, status_clean


def _repo(tmp_path: Path, names: list[str]) -> Repo:
    root = tmp_path / "repo"
    root.mkdir()
    repo = Repo.init(str(root))
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(name.encode() * 3)
    index = repo.open_index()
    for name in names:
        blob = Blob.from_string((root / name).read_bytes())
        repo.object_store.add_object(blob)  # git write-tree wants the objects
        index[name.encode()] = index_entry_from_stat(os.stat(root / name), blob.id, FILE_MODE)
    index.write()
    return repo


def _blob_id(root: Path, name: str) -> bytes:
    return Blob.from_string((root / name).read_bytes()).id


def _entries(root: Path, names: list[str]) -> dict[bytes, gitindex.Entry]:
    return {n.encode(): gitindex.Entry(os.stat(root / n), _blob_id(root, n)) for n in names}


def test_a_patched_index_is_byte_for_byte_what_dulwich_writes(tmp_path: Path) -> None:
    names = ["a/000000.jsonl", "a/000001.jsonl", "b/000000.jsonl", "config.toml"]
    repo = _repo(tmp_path, names)
    root = Path(repo.path)
    (root / "a/000001.jsonl").write_bytes(b"appended line\n" * 7)
    (root / "config.toml").write_bytes(b"x = 1\n")
    changed = ["a/000001.jsonl", "config.toml"]
    index_path = Path(repo.index_path())
    assert gitindex.patch(index_path, _entries(root, changed), FILE_MODE)
    patched = index_path.read_bytes()
    index = repo.open_index()
    for name in changed:
        index[name.encode()] = index_entry_from_stat(os.stat(root / name), _blob_id(root, name), FILE_MODE)
    index.write()
    assert patched == index_path.read_bytes()
    assert not (root / ".git" / "index.lock").exists()


def test_a_new_path_or_a_taken_lock_leaves_the_index_to_dulwich(tmp_path: Path) -> None:
    repo = _repo(tmp_path, ["one.jsonl"])
    root = Path(repo.path)
    index_path = Path(repo.index_path())
    before = index_path.read_bytes()
    (root / "two.jsonl").write_bytes(b"new\n")
    assert not gitindex.patch(index_path, _entries(root, ["two.jsonl"]), FILE_MODE)
    lock = root / ".git" / "index.lock"
    lock.write_bytes(b"")
    assert not gitindex.patch(index_path, _entries(root, ["one.jsonl"]), FILE_MODE)
    lock.unlink()
    assert index_path.read_bytes() == before
    update_index(repo, ["two.jsonl"])  # the whole read and write: a new entry
    assert b"two.jsonl" in index_path.read_bytes()


def test_an_index_with_an_extension_is_not_patched(tmp_path: Path) -> None:
    repo = _repo(tmp_path, ["one.jsonl", "d/two.jsonl"])
    root = Path(repo.path)
    subprocess.run(
        ["git", "-C", str(root), "write-tree"], check=True, capture_output=True
    )  # adds a TREE extension
    index_path = Path(repo.index_path())
    before = index_path.read_bytes()
    (root / "one.jsonl").write_bytes(b"changed\n")
    assert not gitindex.patch(index_path, _entries(root, ["one.jsonl"]), FILE_MODE)
    assert index_path.read_bytes() == before


def test_git_sees_a_store_clean_after_appends_that_patch_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = new_store(tmp_path / "ws")
    append(store, 1, log="app")
    append(store, 1, log="web")  # each log's first segment: new entries, the whole write
    patched: list[bool] = []
    real = gitindex.patch

    def counted(*args: object) -> bool:
        patched.append(real(*args))  # type: ignore[arg-type]
        return patched[-1]

    monkeypatch.setattr(gitindex, "patch", counted)
    for _ in range(3):
        append(store, 2, log="app")
        append(store, 1, log="web")
        assert status_clean(store)
    assert patched and all(patched)
