"""One way to open the data directory's SQLite files, safe with several processes at once.

WAL lets readers go on while one process writes; the busy timeout makes a second writer wait
for the first instead of failing with "database is locked". Connections are in autocommit
mode: a write that must be atomic runs inside `immediate`, which takes the write lock at
BEGIN, so two processes never both read a value and then both write from it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import sqlite_utils

BUSY_TIMEOUT_S = 30.0


def connect(path: Path, *, any_thread: bool = False) -> sqlite_utils.Database:
    """`any_thread`: the connection may be closed from another thread than its own (its
    owner still uses it from one thread at a time)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=not any_thread
    )
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return sqlite_utils.Database(conn)


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
    db.conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.conn.execute("ROLLBACK")
        raise
    db.conn.execute("COMMIT")
