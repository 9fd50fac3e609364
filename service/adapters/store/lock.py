"""The store's exclusive lock: fcntl.flock on `.local/lock`, re-entrant within one Store.

Every selfhub write to the store's git files happens under it, so whoever takes it knows no
other selfhub writer is at work: `on_acquire` runs then (the store clears git lock files a
killed write left, `gitcommit.recover`)."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from service.adapters.store.errors import NotWritable, StoreLocked, not_writable

DEFAULT_TIMEOUT = 30.0
_POLL = 0.005
_POLL_MAX = 0.05


class StoreLock:
    """One holder at a time across processes (flock) and threads (an RLock)."""

    def __init__(
        self, path: Path, timeout: float = DEFAULT_TIMEOUT, on_acquire: Callable[[], None] | None = None
    ) -> None:
        self.path = path
        self.timeout = timeout
        self._on_acquire = on_acquire
        self._mutex = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextmanager
    def held(self, timeout: float | None = None) -> Iterator[None]:
        wait = self.timeout if timeout is None else timeout
        if not self._mutex.acquire(timeout=max(wait, 0.0)):
            raise StoreLocked(self.path, wait)
        try:
            if self._depth == 0:
                self._fd = _acquire(self.path, wait)
            self._depth += 1
            try:
                if self._depth == 1 and self._on_acquire is not None:
                    self._on_acquire()
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
                    os.close(self._fd)
                    self._fd = None
        finally:
            self._mutex.release()


def _acquire(path: Path, timeout: float) -> int:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if not_writable(exc):  # the lock is taken to write: a store this user may only read
            raise NotWritable(exc.filename or path) from None
        raise
    deadline = time.monotonic() + timeout
    pause = _POLL
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise StoreLocked(path, timeout) from None
            time.sleep(pause)
            pause = min(pause * 2, _POLL_MAX)
