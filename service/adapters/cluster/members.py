"""`Cluster`: this instance's two connections to the cluster's PostgreSQL database.

The member's connection (one thread) listens on the channel and tries the leader's lock every
`try_s` seconds until it holds it; holding it, it checks the connection as often, so a leader
cut off from the database stops leading within `try_s`, and the lock, a session's, is released
by PostgreSQL as soon as that session ends (a killed process's socket closes at once). The
announcer's connection (another thread) sends what `announce` queued: the event loop never
waits on the database. A session the database dropped is made again every `try_s` seconds;
back, the member calls back once for every workspace (`Announcement(None, None, …)`), since
what was announced meanwhile is lost."""

from __future__ import annotations

import queue
import secrets
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from service.adapters.cluster.payload import CHANNEL, Announcement, decode, encode, lock_key

if TYPE_CHECKING:
    import psycopg

TRY_S = 1.0  # how often a follower tries the lock and a leader checks its connection
CONNECT_S = 3  # a session's connect timeout
STOP_S = 5.0  # how long `stop` waits for the threads to close their sessions
# A peer that vanishes without closing its socket (a node lost) is found dead by TCP keepalive.
KEEPALIVE = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 3}

Heard = Callable[[Announcement], None]


class Cluster:
    def __init__(self, url: str, log: Any, try_s: float = TRY_S, work: str = "background") -> None:
        """`url`: the database's libpq URL; `log`: the app's structlog logger; `work`: the name
        of the background work the lock stands for."""
        self.url, self.log, self.try_s = url, log, try_s
        self.instance = secrets.token_hex(6)
        self.key = lock_key(work)
        self.leading = False
        self.connected = False
        self._heard: Heard = lambda _: None
        self._outbox: queue.SimpleQueue[Announcement | None] = queue.SimpleQueue()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    # --- what the service calls ---------------------------------------------------------------

    def start(self, heard: Heard) -> None:
        """Connect, listen and try the lock in the background; `heard` is called (from the
        member's thread) with each announcement of another instance."""
        self._heard = heard
        for target, name in ((self._member, "cluster-member"), (self._announcer, "cluster-announcer")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def announce(self, workspace: str, commit: str | None) -> None:
        """Tell the other instances `workspace` reached `commit` (queued: never waits)."""
        self._outbox.put(Announcement(workspace, commit, self.instance))

    def polls(self) -> bool:
        """Whether this instance does the background work: it leads, or it cannot reach the
        database (then every instance works alone)."""
        return self.leading or not self.connected

    def stop(self) -> None:
        """Close both sessions (the lock goes with the member's)."""
        self._stopping.set()
        self._outbox.put(None)
        for thread in self._threads:
            thread.join(STOP_S)

    # --- the member: listen, lead -----------------------------------------------------------------

    def _connect(self) -> psycopg.Connection[Any]:
        import psycopg
        from psycopg.conninfo import make_conninfo

        info = make_conninfo(self.url, connect_timeout=CONNECT_S, application_name="selfhub", **KEEPALIVE)
        return psycopg.connect(info, autocommit=True)

    def _member(self) -> None:
        import psycopg

        cut_off = False
        while not self._stopping.is_set():
            try:
                with self._connect() as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._joined(cut_off)
                    cut_off = False
                    self._watch(conn)
            except psycopg.Error as exc:
                if self.connected or not cut_off:
                    self.log.warning("cluster-unreachable", instance=self.instance, error=_line(exc))
                self._left()
                cut_off = True
                self._stopping.wait(self.try_s)
        self._left()

    def _watch(self, conn: psycopg.Connection[Any]) -> None:
        while not self._stopping.is_set():
            if not self.leading:
                row = conn.execute("SELECT pg_try_advisory_lock(%s)", (self.key,)).fetchone()
                if row is not None and row[0]:
                    self.leading = True
                    self.log.info("cluster-leader", instance=self.instance)
            for note in conn.notifies(timeout=self.try_s):
                self._deliver(note.payload)
            if self.leading:
                conn.execute("SELECT 1")  # still connected, so still holding the lock

    def _joined(self, cut_off: bool) -> None:
        self.connected = True
        self.log.info("cluster-joined", instance=self.instance)
        if cut_off:
            self._call(Announcement(None, None, self.instance))

    def _left(self) -> None:
        if self.leading:
            self.log.warning("cluster-leader-lost", instance=self.instance)
        self.leading = self.connected = False

    def _deliver(self, payload: str) -> None:
        found = decode(payload)
        if found is not None and found.instance != self.instance:
            self._call(found)

    def _call(self, announcement: Announcement) -> None:
        try:
            self._heard(announcement)
        except Exception as exc:  # the service's side failed: the listening goes on
            self.log.error("cluster-heard-failed", workspace=announcement.workspace, error=str(exc))

    # --- the announcer ----------------------------------------------------------------------------

    def _announcer(self) -> None:
        import psycopg

        conn: psycopg.Connection[Any] | None = None
        while (item := self._outbox.get()) is not None:
            try:
                if conn is None or conn.closed:
                    conn = self._connect()
                conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, encode(item)))
            except psycopg.Error as exc:
                self.log.warning(
                    "cluster-announce-skipped", workspace=item.workspace, commit=item.commit, error=_line(exc)
                )
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()


def _line(exc: Exception) -> str:
    """An error's first line (libpq's messages run over several)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
