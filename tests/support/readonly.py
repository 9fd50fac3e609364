"""A store or data directory its user may read but not write, as a real user meets one (the
files another account's, or `chmod -R a-w`), and `self` run as that user: a real process.

Root writes through a file's mode, so as root the process gives up its capabilities before it
runs `self` (every one, from its bounding set too, as `setpriv --bounding-set=-all` does): it
keeps uid 0, owns the files, and is held to their mode as their owner would be. Another user
runs `self` as it is.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.selfrun import SELF

PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
CAP_VERSION_3 = 0x20080522
LAST_CAP = 63
TIMEOUT_S = 30
WRITE = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _no_capabilities() -> None:
    """In the child, before it runs `self`: no capability now or after exec (uid 0 stays)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(LAST_CAP + 1):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != errno.EINVAL:
            raise OSError(ctypes.get_errno(), f"cannot drop capability {cap}")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    data = (_CapData * 2)()  # all zero: effective, permitted and inheritable emptied
    if libc.capset(ctypes.byref(_CapHeader(CAP_VERSION_3, 0)), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def as_reader(
    args: tuple[str, ...], env: dict[str, str], cwd: Path | None = None, timeout: float = TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """`self ARGS…` as a user held to the files' modes (root without its capabilities)."""
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    return subprocess.run(
        [SELF, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        preexec_fn=_no_capabilities if root else None,
    )


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`chmod -R a-w folder` for the block, the modes put back after."""
    paths = [folder, *folder.rglob("*")]
    modes = {p: p.lstat().st_mode for p in paths if not p.is_symlink()}
    for path in sorted(modes, key=lambda p: len(p.parts), reverse=True):
        path.chmod(stat.S_IMODE(modes[path]) & ~WRITE)
    try:
        yield
    finally:
        for path, mode in modes.items():
            path.chmod(stat.S_IMODE(mode))


def files(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` and its bytes (git's objects and index included)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }
