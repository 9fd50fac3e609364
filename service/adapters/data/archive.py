"""A backup of a data directory: one tar file, made while the service serves and writes, and
restored into a new folder.

```
manifest.json                 the archive's format, DATA's format, each workspace's main and counts
auth.sqlite                   users, tokens, sessions: SQLite's online backup
backends/<name>.json          remote-backed workspaces' records
workspaces/<name>.pack        the objects the store's main reaches (`packs.py`)
workspaces/<name>.pushes      the store's `.local/pushes.jsonl`: who pushed which events
```

What is left out is rebuilt: `index.sqlite` (the search index) as the service starts, a store's
caches as it is read, its arrival journal with a new epoch (a feed cursor of the old one is
answered by a replay from the start), what sync remembers at the next sync.

Every event acknowledged before the backup began is in it: each store's main is read after the
backup begins, and a write is acknowledged only once main holds it. `pushes.jsonl` is read after
main: its line for a push is written before main moves to the pushed commit.
"""

from __future__ import annotations

import datetime
import io
import re
import sqlite3
import tarfile
import tempfile
from pathlib import Path

import msgspec

from service.adapters.data import formats, packs
from service.adapters.data.packs import BackupError, Counts
from service.adapters.data.sqlite import copy
from service.adapters.data.workspaces import NOT_CONTENT, Data
from service.adapters.store import layout

ARCHIVE_FORMAT = 1
MANIFEST = "manifest.json"
PUSHES = "pushes.jsonl"
MEMBER = re.compile(
    r"^(manifest\.json|auth\.sqlite|backends/[a-z0-9_.-]+\.json|workspaces/[a-z0-9_.-]+\.(pack|pushes))$"
)


class Workspace(msgspec.Struct, frozen=True):
    name: str
    head: str  # the commit its main named when the backup read it
    counts: Counts
    pushes: int  # lines of .local/pushes.jsonl kept


class Manifest(msgspec.Struct, frozen=True):
    archive: int  # this file's format
    data_format: int  # the data directory's (`formats.py`)
    made: str  # when the backup began, UTC
    workspaces: list[Workspace]
    backends: list[str]
    users: int
    tokens: int


def write(data: Data, to: Path) -> Manifest:
    """A backup of `data` in the new file `to` (written beside it, then renamed into place)."""
    made = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    to.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".selfhub-backup.", dir=to.parent) as tmp:
        staged = Path(tmp)
        (staged / "workspaces").mkdir()
        spaces = [_store(data, name, staged) for name in data.names()]
        users, tokens = _auth(data, staged)
        backends = _backends(data, staged)
        manifest = Manifest(ARCHIVE_FORMAT, formats.read(data.root), made, spaces, backends, users, tokens)
        (staged / MANIFEST).write_bytes(msgspec.json.format(msgspec.json.encode(manifest)) + b"\n")
        _tar(staged, to)
    return manifest


def _store(data: Data, name: str, staged: Path) -> Workspace:
    root = data.path(name)
    commit = packs.head(root)
    kept = _whole_lines(root / layout.LOCAL_DIR / PUSHES)  # after main: see the docstring
    (staged / "workspaces" / f"{name}.pushes").write_bytes(kept)
    objects = packs.pack(root, commit, staged / "workspaces" / f"{name}.pack")
    counts = packs.count(root, commit)
    if counts.objects != objects:
        raise BackupError(f"workspace {name}: packed {objects} objects of the {counts.objects} main reaches")
    return Workspace(name, commit, counts, kept.count(b"\n"))


def _whole_lines(path: Path) -> bytes:
    """The file's bytes up to its last newline (a line being appended is left out)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return b""
    return data[: data.rfind(b"\n") + 1]


def _auth(data: Data, staged: Path) -> tuple[int, int]:
    """auth.sqlite copied by SQLite's online backup; its users and tokens."""
    if not data.auth_db.is_file():
        return 0, 0
    copy(data.auth_db, staged / "auth.sqlite")
    return _auth_counts(staged / "auth.sqlite")


def _auth_counts(path: Path) -> tuple[int, int]:
    db = sqlite3.connect(str(path))
    try:
        if db.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            raise BackupError(f"{path} fails SQLite's integrity check")
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        users = db.execute("SELECT count(*) FROM users").fetchone()[0] if "users" in tables else 0
        tokens = db.execute("SELECT count(*) FROM tokens").fetchone()[0] if "tokens" in tables else 0
        return int(users), int(tokens)
    finally:
        db.close()


def _backends(data: Data, staged: Path) -> list[str]:
    names = data.backends.names()
    for name in names:
        target = staged / "backends" / f"{name}.json"
        target.parent.mkdir(exist_ok=True)
        target.write_bytes((data.backends.folder / f"{name}.json").read_bytes())
    return names


def _tar(staged: Path, to: Path) -> None:
    """The staged files as a gzip'd tar at `to`, the manifest first."""
    partial = to.with_name(f".{to.name}.partial")
    members = [staged / MANIFEST, *sorted(p for p in staged.rglob("*") if p.is_file() and p.name != MANIFEST)]
    with tarfile.open(partial, "w:gz") as tar:
        for path in members:
            tar.add(path, arcname=path.relative_to(staged).as_posix(), recursive=False)
    partial.replace(to)


def manifest(archive: Path) -> Manifest:
    """The archive's manifest; BackupError for a file that is not a selfhub backup."""
    try:
        with tarfile.open(archive, "r:*") as tar:
            member = tar.extractfile(MANIFEST)
            raw = member.read() if member is not None else b""
    except (tarfile.TarError, KeyError, EOFError, OSError) as exc:
        raise BackupError(f"{archive} is not a selfhub backup ({exc})") from None
    try:
        return msgspec.json.decode(raw, type=Manifest)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BackupError(f"{archive}'s manifest cannot be read ({exc})") from None


def restore(archive: Path, target: Path) -> Manifest:
    """The backup `archive` made a data directory at `target` (a new or empty folder), then
    verified: every store by `git fsck` and the manifest's counts, auth.sqlite by SQLite's
    integrity check and its counts."""
    found = manifest(archive)
    _check_restorable(archive, found, target)
    try:
        _restore(archive, found, target)
    except BaseException:
        _clear(target)  # it was new or empty: nothing of a failed restore is left in it
        raise
    return found


def _restore(archive: Path, found: Manifest, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".selfhub-restore.", dir=target.parent) as tmp:
        staged = Path(tmp)
        _extract(archive, staged)
        target.mkdir(exist_ok=True)
        if (staged / "auth.sqlite").is_file():
            (staged / "auth.sqlite").replace(target / "auth.sqlite")
        for name in found.backends:
            (target / "backends").mkdir(exist_ok=True)
            (staged / "backends" / f"{name}.json").replace(target / "backends" / f"{name}.json")
        for space in found.workspaces:
            _restore_store(staged, space, Data(target).path(space.name))
    data = Data(target)
    if found.data_format != formats.UNVERSIONED:  # restored as it was: an older one is upgraded next
        formats.stamp(data.root, found.data_format)
    data.mark()
    verify(data, found)


def _clear(target: Path) -> None:
    import shutil

    if target.is_dir():
        for path in target.iterdir():
            if path.name not in NOT_CONTENT:
                shutil.rmtree(path) if path.is_dir() else path.unlink()


def _check_restorable(archive: Path, found: Manifest, target: Path) -> None:
    if found.archive > ARCHIVE_FORMAT or found.data_format > formats.DATA_FORMAT:
        raise formats.FormatNewer(archive, max(found.archive, found.data_format), formats.DATA_FORMAT)
    if target.exists() and (not target.is_dir() or any(p.name not in NOT_CONTENT for p in target.iterdir())):
        raise BackupError(f"{target} is not empty: a backup is restored into a new or empty folder")


def _extract(archive: Path, staged: Path) -> None:
    """The archive's files in `staged`, each name one a backup writes (nothing else is read)."""
    with tarfile.open(archive, "r:*") as tar:
        for member in tar:
            if not member.isfile() or not MEMBER.match(member.name):
                raise BackupError(f"{archive} holds {member.name!r}, which no selfhub backup writes")
            source = tar.extractfile(member)
            assert source is not None  # a regular file's
            path = staged / member.name
            path.parent.mkdir(parents=True, exist_ok=True)
            with source, path.open("wb") as out:
                while chunk := source.read(io.DEFAULT_BUFFER_SIZE * 64):
                    out.write(chunk)


def _restore_store(staged: Path, space: Workspace, root: Path) -> None:
    packs.unpack(staged / "workspaces" / f"{space.name}.pack", space.head, root)
    local = root / layout.LOCAL_DIR
    local.mkdir()
    (staged / "workspaces" / f"{space.name}.pushes").replace(local / PUSHES)


def verify(data: Data, found: Manifest) -> None:
    """BackupError unless the restored data directory holds what the manifest counted."""
    names = data.names()
    if names != sorted(s.name for s in found.workspaces):
        raise BackupError(
            f"{data.root} holds workspaces {names}, the backup {[s.name for s in found.workspaces]}"
        )
    for space in found.workspaces:
        packs.verify(data.path(space.name), space.head, space.counts)
    counted = _auth_counts(data.auth_db) if data.auth_db.is_file() else (0, 0)
    if counted != (found.users, found.tokens):
        raise BackupError(
            f"{data.auth_db} holds {counted} users and tokens, the backup {found.users, found.tokens}"
        )
