"""Commits built straight from the object store: no porcelain, no git binary.

Only the changed files get blobs; only the trees on their paths are rebuilt, every other
subtree is reused from the parent commit. refs/heads/main moves by compare-and-swap.

Git's lock files: while a write holds one (`refs/heads/main.lock`, `index.lock`, ...), the
git dir holds `selfhub-lock` naming it. A write killed meanwhile leaves both; the next one
takes the store lock, so it knows the lock file is its dead predecessor's and removes it
(`recover`). A ref lock found without that note is removed once it is `STALE_LOCK` seconds
old: git holds one for milliseconds.

`index.lock` is removed only with the note (git holds it as long as a `git commit` editor is
open) or by `self doctor --repair`, which removes every git lock file at least `STALE_LOCK`
old. `tests/e2e/test_crash_locks.py` kills real `self` processes the moment a lock file
appears.

What a commit touches: the trees of the parent commit come from those the process wrote last
(`_written`, the last `KEPT_OBJECTS` of each object store) before the loose objects; the new
blob, trees and commit are loose objects at zlib level 1 (git's own for loose objects; the
store sets it). Per commit of eight events posted to the service, on average: 28 opens, 2.4
directory reads and 7 new files (six objects and the ref's lock), counted with `strace`.
"""

from __future__ import annotations

import contextlib
import enum
import os
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from dulwich.file import FileLocked
from dulwich.index import Index, IndexEntry, index_entry_from_stat
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from service.adapters.store import gitindex, layout
from service.adapters.store.errors import RefMoved, StoreError

BRANCH = Ref(b"refs/heads/main")
AUTHOR_ENV = "SELF_AUTHOR"
DEFAULT_AUTHOR = "selfhub <selfhub@localhost>"
FILE_MODE = 0o100644
DIR_MODE = 0o040000
EMPTY_TREE = Tree().id

Changes = dict[bytes, "Changes | ObjectID | None"]


MARKER = "selfhub-lock"  # in the git dir: the git lock file a selfhub write holds right now
STALE_LOCK = 2.0  # seconds after which a ref lock nobody removed is a crashed writer's
_POLL = 0.02
KEPT_OBJECTS = 64  # trees and commits a process keeps of those it wrote, per object store
T = TypeVar("T")
# The trees and commits of the last commits written, by object store: the next commit starts
# from them instead of reading each back from its loose object (a listing of the pack folder,
# an open, an inflate and a parse each). An id names one content, so a kept object is the stored one.
_written: weakref.WeakKeyDictionary[object, dict[ObjectID, ShaFile]] = weakref.WeakKeyDictionary()


class StaleLock(UserWarning):
    """A git lock file a killed selfhub write left was removed."""


class _Head(enum.Enum):
    CURRENT = "the commit main points at now"


CURRENT = _Head.CURRENT


def identity() -> bytes:
    """The author and committer: $SELF_AUTHOR, or the fixed selfhub identity."""
    return (os.environ.get(AUTHOR_ENV) or DEFAULT_AUTHOR).encode("utf-8")


def head(repo: Repo) -> ObjectID | None:
    """The commit refs/heads/main points at, or None before the first commit."""
    try:
        return repo.refs[BRANCH]
    except KeyError:
        return None


def commit_files(
    repo: Repo, files: dict[str, bytes], message: str, *, parent: ObjectID | _Head | None = CURRENT
) -> ObjectID:
    """Commit `files` (path relative to the root → new content); returns the commit id.

    The parent is main's current commit, or `parent` when given (None: a root commit);
    main moves only if it still points at that parent, else RefMoved.
    """
    if parent is CURRENT:
        parent = head(repo)
    commit_id = build_commit(repo, files, message, parent)
    if commit_id != parent:
        _move_branch(repo, parent, commit_id, message)
    return commit_id


def build_tree(repo: Repo, files: dict[str, bytes]) -> ObjectID:
    """Write the blobs and trees of exactly `files` (path → content); returns the root tree id."""
    blobs = {path: Blob.from_string(data) for path, data in files.items()}
    written: list[ShaFile] = list(blobs.values())
    tree_id = _rebuild(repo, None, _nest({p: b.id for p, b in blobs.items()}), written)
    for obj in written:
        repo.object_store.add_object(obj)
    return tree_id


def build_commit(
    repo: Repo,
    files: dict[str, bytes],
    message: str,
    parent: ObjectID | None,
    *,
    removed: tuple[str, ...] | list[str] = (),
) -> ObjectID:
    """Write a commit of `parent`'s tree with `files` changed and `removed` deleted; no ref moves.

    Returns `parent` itself when nothing changes (and there is a parent).
    """
    blobs = {path: Blob.from_string(data) for path, data in files.items()}
    written: list[ShaFile] = list(blobs.values())
    base = _tree_of(repo, parent)
    changes: dict[str, ObjectID | None] = {p: b.id for p, b in blobs.items()}
    changes.update(dict.fromkeys(removed))
    tree_id = _rebuild(repo, base, _nest(changes), written)
    if parent is not None and base is not None and tree_id == base.id:
        return parent
    commit = _commit(tree_id, parent, message)
    written.append(commit)
    for obj in written:
        repo.object_store.add_object(obj)
    _keep(repo, [obj for obj in written if not isinstance(obj, Blob)])
    return commit.id


def _keep(repo: Repo, objects: list[ShaFile]) -> None:
    kept = _written.setdefault(repo.object_store, {})
    for obj in objects:
        kept[obj.id] = obj
    for old in list(kept)[: max(0, len(kept) - KEPT_OBJECTS)]:
        del kept[old]


def _read(repo: Repo, object_id: ObjectID) -> ShaFile:
    """An object by id: one this process wrote lately, else the store's."""
    kept = _written.get(repo.object_store)
    found = kept.get(object_id) if kept is not None else None
    return found if found is not None else repo[object_id]


def _tree_of(repo: Repo, commit_id: ObjectID | None) -> Tree | None:
    if commit_id is None:
        return None
    commit = _read(repo, commit_id)
    assert isinstance(commit, Commit)
    tree = _read(repo, commit.tree)
    assert isinstance(tree, Tree)
    return tree


def _nest(paths: dict[str, ObjectID | None]) -> Changes:
    root: Changes = {}
    for path, blob_id in paths.items():
        *dirs, name = path.encode("utf-8").split(b"/")
        node = root
        for part in dirs:
            child = node.setdefault(part, {})
            assert isinstance(child, dict)
            node = child
        node[name] = blob_id
    return root


def _rebuild(repo: Repo, old: Tree | None, changes: Changes, written: list[ShaFile]) -> ObjectID:
    """A copy of `old` with `changes` applied; new trees are added to `written`."""
    tree = Tree()
    if old is not None:
        for entry in old.iteritems():
            tree.add(entry.path, entry.mode, entry.sha)
    for name, change in changes.items():
        if isinstance(change, dict):
            sub = _rebuild(repo, _subtree(repo, old, name), change, written)
            if sub == EMPTY_TREE and name in tree:
                del tree[name]  # every file under it was removed
            elif sub != EMPTY_TREE:
                tree[name] = (DIR_MODE, sub)
        elif change is None:
            if name in tree:
                del tree[name]
        else:
            tree[name] = (FILE_MODE, change)
    written.append(tree)
    return tree.id


def _subtree(repo: Repo, tree: Tree | None, name: bytes) -> Tree | None:
    if tree is None or name not in tree:
        return None
    mode, sha = tree[name]
    if mode != DIR_MODE:
        return None
    sub = _read(repo, sha)
    assert isinstance(sub, Tree)
    return sub


def _commit(tree_id: ObjectID, parent: ObjectID | None, message: str) -> Commit:
    who = identity()
    now = int(time.time())
    commit = Commit()
    commit.tree = tree_id
    commit.parents = [parent] if parent is not None else []
    commit.author = commit.committer = who
    commit.author_time = commit.commit_time = now
    commit.author_timezone = commit.commit_timezone = 0
    commit.encoding = b"UTF-8"
    commit.message = message.encode("utf-8") + b"\n"
    return commit


def move_branch(repo: Repo, parent: ObjectID | None, new: ObjectID, message: str) -> None:
    """Move refs/heads/main from `parent` (None: absent) to `new`, or raise RefMoved."""
    _move_branch(repo, parent, new, message)


def _move_branch(repo: Repo, parent: ObjectID | None, new: ObjectID, message: str) -> None:
    reflog = b"commit: " + message.encode("utf-8")

    def move() -> bool:
        with holding(repo, BRANCH.decode() + ".lock"):
            if parent is None:
                return repo.refs.add_if_new(BRANCH, new, committer=identity(), message=reflog)
            return repo.refs.set_if_equals(BRANCH, parent, new, committer=identity(), message=reflog)

    try:
        moved = past_stale_lock(move)
    except FileLocked as exc:
        raise StoreError(
            "refs/heads/main is locked by another git process (.git/refs/heads/main.lock); "
            "nothing was appended; retry when it is done"
        ) from exc
    if not moved:
        found = head(repo)
        raise RefMoved(_text(parent), _text(found))


def set_ref(repo: Repo, ref: Ref, sha: ObjectID) -> None:
    """Point `ref` at `sha` (no compare-and-swap: a ref only selfhub moves, under the store lock)."""

    def write() -> None:
        repo.refs[ref] = sha

    with holding(repo, ref.decode() + ".lock"):
        past_stale_lock(write)


@contextlib.contextmanager
def holding(repo: Repo, lock: str) -> Iterator[None]:
    """Note in the git dir that this write takes git's lock file `lock` (relative to the git
    dir) until the block ends. Callers hold the store lock, so one note at a time. The note's
    file stays, emptied after: making and removing a file each commit cost two changes of the
    git dir's entries."""
    marker = Path(repo.controldir()) / MARKER
    layout.overwrite(marker, lock.encode("utf-8"))  # no fsync: a killed process loses no written page
    try:
        yield
    finally:
        layout.overwrite(marker, b"")


def recover(git_dir: Path) -> list[str]:
    """Remove the git lock file a killed selfhub write left (its note says which); the caller
    has just taken the store lock, so that write is over. Returns what was removed."""
    marker = git_dir / MARKER
    try:
        lock = marker.read_text("utf-8").strip()
    except (FileNotFoundError, UnicodeDecodeError):
        return []
    if not lock:
        return []  # the note of a write that ended
    removed = []
    parts = lock.split("/")
    if lock.endswith(".lock") and ".." not in parts and "" not in parts:
        with contextlib.suppress(FileNotFoundError):
            (git_dir / lock).unlink()
            removed.append(lock)
    marker.unlink(missing_ok=True)
    return removed


def past_stale_lock(write: Callable[[], T]) -> T:
    """`write()`; if a ref's lock file is in the way, wait until it goes or is STALE_LOCK
    seconds old, remove it if it stayed, and `write()` once more (FileLocked if locked again)."""
    try:
        return write()
    except FileLocked as exc:
        lock = Path(os.fsdecode(exc.args[1]))
    deadline = time.monotonic() + STALE_LOCK + 1
    while time.monotonic() < deadline:
        try:
            age = time.time() - lock.stat().st_mtime
        except FileNotFoundError:
            break
        if age >= STALE_LOCK:
            lock.unlink(missing_ok=True)
            break
        time.sleep(_POLL)
    return write()


def lock_files(git_dir: Path) -> list[Path]:
    """The git lock files in a store's git dir that block selfhub's writes or plain git's."""
    found = [git_dir / name for name in ("index.lock", "HEAD.lock", "config.lock", "packed-refs.lock")]
    found = [p for p in found if p.exists()]
    return found + sorted((git_dir / "refs").rglob("*.lock"))


def clear_stale_locks(git_dir: Path) -> list[Path]:
    """Remove every lock file of `lock_files` at least STALE_LOCK seconds old (`self doctor
    --repair`: a person asked, with no git command running in the store). Returns them."""
    removed = []
    for lock in lock_files(git_dir):
        with contextlib.suppress(FileNotFoundError):
            if time.time() - lock.stat().st_mtime >= STALE_LOCK:
                lock.unlink()
                removed.append(lock)
    return removed


def _text(sha: ObjectID | None) -> str | None:
    return None if sha is None else sha.decode("ascii")


def tree_files(repo: Repo, commit_id: ObjectID) -> dict[str, ObjectID]:
    """Every file of a commit's tree: path (forward slashes) → blob id."""
    out: dict[str, ObjectID] = {}
    tree = _tree_of(repo, commit_id)
    stack: list[tuple[str, Tree]] = [("", tree)] if tree is not None else []
    while stack:
        prefix, node = stack.pop()
        for entry in node.iteritems():
            path = prefix + entry.path.decode("utf-8")
            if entry.mode == DIR_MODE:
                sub = repo[entry.sha]
                assert isinstance(sub, Tree)
                stack.append((path + "/", sub))
            else:
                out[path] = entry.sha
    return out


def blob_data(repo: Repo, blob_id: ObjectID) -> bytes:
    blob = repo[blob_id]
    assert isinstance(blob, Blob)
    return blob.as_raw_string()


def working_blob_ids(repo: Repo, paths: list[str]) -> dict[str, ObjectID]:
    """The blob id of each working file that exists, trusting `.git/index` where the file's
    size and mtime are the ones it recorded (as git does), hashing the file otherwise."""
    root = Path(repo.path)
    try:
        index = repo.open_index()
    except (OSError, FileLocked, ValueError):
        index = None
    out: dict[str, ObjectID] = {}
    for path in paths:
        try:
            stat = os.stat(root / path)
        except FileNotFoundError:
            continue
        entry = None
        if index is not None:
            with contextlib.suppress(KeyError):
                entry = index[path.encode("utf-8")]
        # A conflicted entry (merge stages) records no size or mtime: the file is hashed.
        if (
            isinstance(entry, IndexEntry)
            and entry.size == stat.st_size
            and _mtime_ns(entry.mtime) == stat.st_mtime_ns
        ):
            out[path] = entry.sha
        else:
            out[path] = Blob.from_string((root / path).read_bytes()).id
    return out


def _mtime_ns(mtime: object) -> int | None:
    if isinstance(mtime, tuple):
        return int(mtime[0]) * 1_000_000_000 + int(mtime[1])
    return None  # a float or int mtime is too coarse to trust


def update_index(repo: Repo, paths: list[str], removed: list[str] | None = None) -> None:
    """Point .git/index at the worktree files just committed, so plain git sees them clean.

    The index is a convenience for people who look at the store with git; the commit is
    already made, so a failure here is not an error of the caller.
    """
    root = Path(repo.path)
    try:
        with holding(repo, "index.lock"):
            entries = _entries(root, paths)
            # in place (`gitindex`) when it can be; else dulwich reads and writes it whole
            if removed or not gitindex.patch(Path(repo.index_path()), entries, FILE_MODE):
                _update(repo.open_index(), entries, removed or [])
    except (OSError, FileLocked):
        pass


def _entries(root: Path, paths: list[str]) -> dict[bytes, gitindex.Entry]:
    """Each path's stat and blob id, as its index entry records them."""
    entries = {}
    for path in paths:
        data = (root / path).read_bytes()
        entries[path.encode("utf-8")] = gitindex.Entry(os.stat(root / path), Blob.from_string(data).id)
    return entries


def _update(index: Index, entries: dict[bytes, gitindex.Entry], removed: list[str]) -> None:
    for path, entry in entries.items():
        index[path] = index_entry_from_stat(entry.stat, entry.blob, FILE_MODE)
    for name in removed:
        if name.encode("utf-8") in index:
            del index[name.encode("utf-8")]
    index.write()
