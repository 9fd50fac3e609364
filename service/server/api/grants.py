"""The grants of tokens checked lately, kept only while DATA/auth.sqlite is unchanged: SQLite's
`PRAGMA data_version` moves whenever another connection commits (a token created, revoked,
or its last use written), and then every kept grant is dropped. So a revoke still works at
once, while a request whose token was checked before, in the same minute, is let through on
the event loop without a worker thread or a query of the tokens table."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from typing import TYPE_CHECKING

from service.adapters.store.clock import wall_ms

if TYPE_CHECKING:
    from pathlib import Path

    from service.adapters.auth.tokens import Grant

MINUTE_MS = 60_000  # a token's last use is written once a minute: a grant is kept within one


def _minute() -> int:
    return wall_ms() // MINUTE_MS


class Grants:
    def __init__(self, auth_db: Path) -> None:
        self._path = auth_db
        self._kept: dict[bytes, tuple[Grant, int]] = {}
        self._version: int | None = None
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None  # the event loop's own, opened there

    def known(self, token: str) -> Grant | None:
        """The grant `token` had when it was last checked, if nothing changed since, this
        minute. Only the event loop's thread calls this."""
        if not self._kept:
            return None
        version = self._data_version()
        key = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        with self._lock:
            if version != self._version:
                self._kept.clear()
                return None
            found = self._kept.get(key)
        if found is None or found[1] != _minute():
            return None
        return found[0]

    def keep(self, token: str, grant: Grant) -> None:
        """Remember a grant just read from the tokens table (any thread)."""
        key = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        with self._lock:
            if self._version is None:
                return  # the loop has not looked yet: the version this grant belongs to is unknown
            self._kept[key] = (grant, _minute())

    def watch(self) -> None:
        """Note the database's version now (the loop's thread, before a check in a worker)."""
        version = self._data_version()
        with self._lock:
            if version != self._version:
                self._kept.clear()
                self._version = version

    def _data_version(self) -> int | None:
        try:
            if self._conn is None:
                self._conn = sqlite3.connect(f"file:{self._path}?mode=ro", uri=True, timeout=0.05)
            row = self._conn.execute("PRAGMA data_version").fetchone()
        except sqlite3.Error:
            self._conn = None
            return None
        return int(row[0])
