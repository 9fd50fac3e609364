"""One way to open the data directory's SQLite files, safe with several processes at once.

WAL lets readers go on while one process writes; the busy timeout makes a second writer wait
for the first instead of failing with "database is locked". Connections are in autocommit
mode: a write that must be atomic runs inside `immediate`, which takes the write lock at
BEGIN, so two processes never both read a value and then both write from it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import sqlite_utils

from service.adapters.store.errors import NotWritable

BUSY_TIMEOUT_S = 30.0


def connect(path: Path, *, any_thread: bool = False) -> sqlite_utils.Database:
    """`any_thread`: the connection may be closed from another thread than its own (its
    owner still uses it from one thread at a time). A file this user may not write (another
    account's, a read-only mount) is opened to read: a write through it is NotWritable."""
    if not _writable(path):
        return sqlite_utils.Database(_read_only(path, any_thread))
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=not any_thread
    )
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return sqlite_utils.Database(conn)


def _writable(path: Path) -> bool:
    """Whether this user may write the database (and its folder, where its write-ahead log
    goes); a missing folder counts as writable: the first write makes it."""
    folder = path.parent
    if folder.exists() and not os.access(folder, os.W_OK | os.X_OK):
        return False
    return not path.exists() or os.access(path, os.W_OK)


def _read_only(path: Path, any_thread: bool) -> sqlite3.Connection:
    """The database opened to read. In WAL mode a reader shares the writers' index file next
    to it; when none is there (no process has it open) and none can be made, the file is read
    as it is on disk, as no writer is at it."""
    if not path.is_file():
        raise NotWritable(path, "the data directory")
    for query in ("mode=ro", "mode=ro&immutable=1"):
        conn = sqlite3.connect(
            f"{path.as_uri()}?{query}",
            uri=True,
            timeout=BUSY_TIMEOUT_S,
            isolation_level=None,
            check_same_thread=not any_thread,
        )
        try:
            conn.execute("PRAGMA user_version").fetchone()
        except sqlite3.OperationalError:
            conn.close()
            continue
        conn.execute("PRAGMA foreign_keys = ON")
        return conn
    raise NotWritable(path, "the data directory")


@contextlib.contextmanager
def snapshot(db: sqlite_utils.Database) -> Iterator[None]:
    """One read transaction: every statement inside sees the same committed state (WAL lets
    writers go on meanwhile)."""
    db.conn.execute("BEGIN DEFERRED")
    try:
        yield
    finally:
        db.conn.execute("COMMIT")


@contextlib.contextmanager
def immediate(db: sqlite_utils.Database) -> Iterator[None]:
    """One write transaction, holding the database's write lock from its start."""
    with _refused_as_read_only(db):
        db.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if db.conn.in_transaction:
                db.conn.execute("ROLLBACK")
            raise
        db.conn.execute("COMMIT")


@contextlib.contextmanager
def _refused_as_read_only(db: sqlite_utils.Database) -> Iterator[None]:
    """SQLite's refusal to write a database opened to read (`connect`), as NotWritable."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        if "readonly" not in str(exc):
            raise
        path = db.conn.execute("PRAGMA database_list").fetchone()[2]
        raise NotWritable(Path(path) if path else "the database", "the data directory") from None


def copy(source: Path, to: Path) -> None:
    """A copy of the database at `source` in the new file `to`, consistent at one moment: SQLite's
    online backup, while other connections go on reading and writing `source`."""
    src = sqlite3.connect(str(source), timeout=BUSY_TIMEOUT_S, isolation_level=None)
    dst = sqlite3.connect(str(to), isolation_level=None)
    try:
        src.backup(dst)
        dst.execute("PRAGMA journal_mode = DELETE")  # one file, whatever the source's mode
    finally:
        dst.close()
        src.close()
