"""One flush for many files: `syncfs(2)` makes every file written on the store's filesystem
durable in one call, where a commit would otherwise fsync each segment and git object it
writes (eleven calls a commit). Linux only; elsewhere `flush` answers False and the caller
fsyncs file by file as before."""

from __future__ import annotations

import functools
import os
from pathlib import Path


@functools.cache
def _syncfs() -> object | None:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        return None
    libc = ctypes.CDLL(name, use_errno=True)
    return getattr(libc, "syncfs", None)


def available() -> bool:
    return _syncfs() is not None


def flush(root: Path) -> bool:
    """Make every write to `root`'s filesystem durable; False when this system cannot."""
    syncfs = _syncfs()
    if syncfs is None:
        return False
    fd = os.open(root, os.O_RDONLY)
    try:
        if syncfs(fd) != 0:  # type: ignore[operator]
            import ctypes

            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(root))
    finally:
        os.close(fd)
    return True
