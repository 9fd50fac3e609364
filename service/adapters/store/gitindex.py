"""Changing entries of .git/index in place, so an append costs its own entries, not the index.

An append to a log rewrites one segment (or starts one). The index has an entry per segment,
and reading and writing it whole took a third of a write's own work (not counting the
process's start) at a million events. When every
path written already has an entry, the index is version 2 or 3 and carries no extension (a
cached tree would go stale), each entry's stat fields and blob id are written over where they
are, and the checksum at the end is made again. Anything else returns False and the caller
takes dulwich's whole read and write.

The service writes `.git/index` once its writer was idle for half a second rather than after
every commit. `tests/integration/test_git_index_patch.py` holds the patched bytes to what
dulwich writes for the same update, and `git status` clean after writes.
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

_HEADER = struct.Struct(">4sLL")
_STAT = struct.Struct(">LLLLLLLLLL")  # ctime s/ns, mtime s/ns, dev, ino, mode, uid, gid, size
_SHA_AT, _FLAGS_AT, _NAME_AT = 40, 60, 62
_EXTENDED = 0x4000
_TRAILER = 20
_MASK = 0xFFFFFFFF


class Entry(NamedTuple):
    """What an entry is given: the file's stat and its blob id (40 hex digits)."""

    stat: os.stat_result
    blob: bytes


def patch(index: Path, entries: Mapping[bytes, Entry], mode: int) -> bool:
    """Write `entries` (path → entry) over the index's own entries for those paths; False,
    having written nothing, when the index is not one this can change in place."""
    try:
        data = bytearray(index.read_bytes())
    except FileNotFoundError:
        return False
    places = _places(data)
    if places is None or not all(path in places for path in entries):
        return False
    for path, entry in entries.items():
        at = places[path]
        data[at : at + _SHA_AT] = _stat_bytes(entry.stat, mode)
        data[at + _SHA_AT : at + _FLAGS_AT] = bytes.fromhex(entry.blob.decode("ascii"))
    data[-_TRAILER:] = hashlib.sha1(data[:-_TRAILER], usedforsecurity=False).digest()
    return _replace(index, bytes(data))


def _places(data: bytearray) -> dict[bytes, int] | None:
    """Where each path's entry starts; None for a version or a shape this does not change."""
    if len(data) < _HEADER.size + _TRAILER:
        return None
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3):
        return None
    end = len(data) - _TRAILER
    places: dict[bytes, int] = {}
    at = _HEADER.size
    for _ in range(count):
        if at + _NAME_AT > end:
            return None
        (flags,) = struct.unpack_from(">H", data, at + _FLAGS_AT)
        name_at = at + _NAME_AT + (2 if flags & _EXTENDED else 0)
        nul = data.find(b"\0", name_at, end)
        if nul < 0:
            return None
        places[bytes(data[name_at:nul])] = at
        at += (nul - at + 8) // 8 * 8  # the name's NUL and padding to a multiple of eight
    return places if at == end else None  # bytes after the entries: an extension


def _stat_bytes(stat: os.stat_result, mode: int) -> bytes:
    return _STAT.pack(
        stat.st_ctime_ns // 1_000_000_000 & _MASK,
        stat.st_ctime_ns % 1_000_000_000,
        stat.st_mtime_ns // 1_000_000_000 & _MASK,
        stat.st_mtime_ns % 1_000_000_000,
        stat.st_dev & _MASK,
        stat.st_ino & _MASK,
        mode,
        stat.st_uid & _MASK,
        stat.st_gid & _MASK,
        stat.st_size & _MASK,
    )


def _replace(index: Path, data: bytes) -> bool:
    """Write through git's lock file and rename it over the index; False when the lock is
    taken (someone else is writing the index)."""
    lock = index.with_name(index.name + ".lock")
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(lock, index)
    except BaseException:
        lock.unlink(missing_ok=True)
        raise
    return True
