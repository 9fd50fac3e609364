"""`Turns`: whose turn it is to push a workspace to its git host, among the instances on one
PostgreSQL database (`--replicated` with `--identity`).

Instances pushing one workspace at once race at the host's compare-and-swap: the one whose
fetch-rebase-push is quicker wins every time and the other starves (each loss costs it a fetch,
a rebase and a pause while the winner pushes again). A turn is a session-level advisory lock
on the workspace's key (`pg_advisory_lock`), held for one push: PostgreSQL grants a lock to
those waiting for it in the order they asked, so two instances pushing at once alternate, and
each push carries every write its instance gathered meanwhile.

The lock only orders the pushes; the compare-and-swap still decides what lands. A turn not
had within `wait_s` (a holder stuck on a slow host), or a database away, is a push without one
(`Turn.held` False): a database away is not asked again for `down_s` seconds. Each writer
thread has its own session (a turn blocks it while it waits), and a killed process's session
ends with it, and its turn with the session."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from service.adapters.cluster.payload import lock_key

if TYPE_CHECKING:
    import psycopg

WAIT_S = 5.0  # the longest a push waits for its turn before it goes without one
CONNECT_S = 1  # a session's connect timeout: a push waits at most this for a database away
DOWN_S = 5.0  # a database away is not asked again for this long


class Turns:
    def __init__(self, url: str, log: Any, wait_s: float = WAIT_S, down_s: float = DOWN_S) -> None:
        """`url`: the database's libpq URL; `log`: the app's structlog logger."""
        self.url, self.log, self.wait_s, self.down_s = url, log, wait_s, down_s
        self._sessions = threading.local()  # each writer thread's connection
        self._opened: list[psycopg.Connection[Any]] = []  # every thread's, for `close`
        self._lock = threading.Lock()
        self._down_until = 0.0

    def close(self) -> None:
        """Close every session (their turns go with them)."""
        with self._lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()

    @contextmanager
    def turn(self, workspace: str) -> Iterator[bool]:
        """Hold `workspace`'s push turn for the block: True once held, False when the block
        runs without it (the wait ran out, or the database is away)."""
        conn = self._held(workspace)
        try:
            yield conn is not None
        finally:
            if conn is not None:
                self._release(conn, workspace)

    def _held(self, workspace: str) -> psycopg.Connection[Any] | None:
        import psycopg

        if time.monotonic() < self._down_until:
            return None
        try:
            conn = self._session()
            conn.execute("SELECT pg_advisory_lock(%s)", (_key(workspace),))
            return conn
        except psycopg.errors.LockNotAvailable:
            self.log.warning("push-turn-waited", workspace=workspace, wait_s=self.wait_s)
            return None
        except Exception as exc:  # the database away (psycopg.Error), or anything else: no turn
            self._away(exc)
            return None

    def _release(self, conn: psycopg.Connection[Any], workspace: str) -> None:
        import psycopg

        try:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_key(workspace),))
        except psycopg.Error as exc:  # the session is gone, and its lock with it
            self._away(exc)

    def _session(self) -> psycopg.Connection[Any]:
        import psycopg
        from psycopg.conninfo import make_conninfo

        conn: psycopg.Connection[Any] | None = getattr(self._sessions, "conn", None)
        if conn is None or conn.closed:
            info = make_conninfo(self.url, connect_timeout=CONNECT_S, application_name="selfhub-push")
            conn = psycopg.connect(info, autocommit=True)
            conn.execute("SELECT set_config('lock_timeout', %s, false)", (f"{int(self.wait_s * 1000)}ms",))
            self._sessions.conn = conn
            with self._lock:
                self._opened = [c for c in self._opened if not c.closed] + [conn]
        return conn

    def _away(self, exc: Exception) -> None:
        conn = getattr(self._sessions, "conn", None)
        if conn is not None:
            conn.close()
            self._sessions.conn = None
        self._down_until = time.monotonic() + self.down_s
        self.log.warning("push-turn-unavailable", error=(str(exc).strip().splitlines() or [""])[0])


def _key(workspace: str) -> int:
    return lock_key(f"push:{workspace}")
