"""One connection per thread, closed when its thread ends (a worker pool's threads come and go)
or when its adapter is closed: neither adapter keeps a connection no thread can use.

A connection is closed only by the process that opened it. A child forked from a threaded
process (the git endpoint's `git` programs are spawned that way) drops the other threads'
locals as it starts, before it runs the program: closing their connections there would wait
on a lock some other thread of the parent held at the fork, forever, with the parent waiting
on the child (and, for PostgreSQL, would end the parent's session on the shared socket)."""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

C = TypeVar("C")


class _Held(Generic[C]):
    """A thread's connection; collected with the thread's locals, and closed then."""

    __slots__ = ("__weakref__", "close", "conn", "pid")

    def __init__(self, conn: C, close: Callable[[C], None]) -> None:
        self.conn, self.close, self.pid = conn, close, os.getpid()

    def __del__(self) -> None:
        if os.getpid() == self.pid:  # never in a forked child (the module's docstring)
            self.close(self.conn)


class PerThread(Generic[C]):
    def __init__(self, close: Callable[[C], None]) -> None:
        self._close = close
        self._local = threading.local()
        self._all: weakref.WeakSet[_Held[C]] = weakref.WeakSet()
        self._lock = threading.Lock()

    def get(self) -> C | None:
        """This thread's connection, if it has one."""
        held: _Held[C] | None = getattr(self._local, "held", None)
        return None if held is None else held.conn

    def put(self, conn: C) -> None:
        held = _Held(conn, self._close)
        self._local.held = held
        with self._lock:
            self._all.add(held)

    def drop(self) -> None:
        """Close this thread's connection (a broken one); the next `get` finds none."""
        self._local.held = None  # its last reference: closed now

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            every, self._all = list(self._all), weakref.WeakSet()
            self._local = threading.local()
        for held in every:
            self._close(held.conn)
