"""A hosted store's arrival journal: every event the service took in, numbered in the order it
arrived (`.local/arrivals.sqlite`, machine-local, never committed).

A log is in id order only as far as its writer knows: a sync, a mirror round or a push brings
events written offline, whose ids are older than events already served, and a mirror's merge
puts them between lines already there (`adapters/sync/merge.py`), so neither an id nor a
position in a file says what a reader has not seen yet. The journal does: an event gets the
next number when it arrives, once (a log and an id are taken once), and keeps it. A reader's
cursor is a number of this journal: what arrived after it is what it has not seen.

The journal is made from the logs when it is missing (their events numbered log by log, in id
order) and brought up to the store's head when it is opened (events a CLI wrote while the
service was stopped). Its `epoch`, drawn when it is made, is part of every cursor: a cursor of
a journal made again (`.local` removed) is told apart, never read as another journal's number.
Each taking-in is one SQLite transaction, synced before the events are streamed: a number a
reader was given is never given again.
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

FILE = "arrivals.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS arrival (seq INTEGER PRIMARY KEY, log TEXT NOT NULL, id TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS arrival_id ON arrival (log, id);
CREATE INDEX IF NOT EXISTS arrival_log ON arrival (log, seq);
"""


class Arrivals:
    """The journal of one store; its methods may be called from any thread."""

    def __init__(self, local_dir: Path) -> None:
        local_dir.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(local_dir / FILE, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
            self.epoch = self._meta("epoch") or self._new_epoch()
            self._end = int(self._db.execute("SELECT coalesce(max(seq), 0) FROM arrival").fetchone()[0])

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _new_epoch(self) -> str:
        epoch = secrets.token_hex(4)
        self._db.execute("INSERT INTO meta VALUES ('epoch', ?)", (epoch,))
        return epoch

    @property
    def end(self) -> int:
        """The number of the last event taken in (0: none)."""
        return self._end

    @property
    def head(self) -> str | None:
        """The store's commit the journal holds every event of (None: not known)."""
        with self._lock:
            return self._meta("head")

    def take(self, arrived: Iterable[tuple[str, str]], head: str | None) -> list[int | None]:
        """Number each (log, id) not taken before, in the order given; its number, or None for
        one taken already. `head`: the store's commit that holds them all."""
        numbers: list[int | None] = []
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for log, event_id in arrived:
                    done = self._db.execute(
                        "INSERT OR IGNORE INTO arrival (log, id) VALUES (?, ?)", (log, event_id)
                    )
                    numbers.append(done.lastrowid if done.rowcount == 1 else None)
                if head is not None:
                    self._db.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (head,))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._end = max([self._end, *(n for n in numbers if n is not None)])
        return numbers

    def known(self, log: str) -> set[str]:
        """The ids of `log` taken in."""
        with self._lock:
            return {row[0] for row in self._db.execute("SELECT id FROM arrival WHERE log = ?", (log,))}

    def after(
        self, log: str | None, seq: int, limit: int, upto: int | None = None
    ) -> list[tuple[int, str, str]]:
        """(number, log, id) of the events taken in after number `seq` (up to `upto`), of
        `log` only when named, in arrival order, at most `limit`."""
        last = self._end if upto is None else upto
        with self._lock:
            if log is None:
                rows = self._db.execute(
                    "SELECT seq, log, id FROM arrival WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
                    (seq, last, limit),
                )
            else:
                rows = self._db.execute(
                    "SELECT seq, log, id FROM arrival WHERE log = ? AND seq > ? AND seq <= ? "
                    "ORDER BY seq LIMIT ?",
                    (log, seq, last, limit),
                )
            return [(int(s), str(lg), str(i)) for s, lg, i in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def bring_up(arrivals: Arrivals, root: Path, logs: Iterable[str], head: str | None) -> None:
    """Take in every event of `logs` the journal lacks (each log's in id order), when the
    store's head is not the one it holds every event of (the store lock held)."""
    from service.adapters.store.segments import ids_of

    if head is not None and head == arrivals.head:
        return
    for log in logs:
        known = arrivals.known(log)
        arrivals.take([(log, i) for i in sorted(set(ids_of(root, log)) - known)], None)
    arrivals.take([], head)
