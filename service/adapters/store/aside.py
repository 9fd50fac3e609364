"""Lines kept out of the logs, in `.local/quarantine/<log>.jsonl` (never synced).

Two kinds get there: the torn tail of a log (a write a crash cut short) before anything
commits the log, and local lines that are not events, which a sync does not publish. Only
whole, valid lines are ever committed; nothing is deleted, it is moved here.

A write lists the log's folder and reads its last segment once, for the torn-tail check and the
append alike (`whole_tail`).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import NamedTuple

import msgspec

from service.adapters.store import layout
from service.core.events.events import decode_unchecked

FOLDER = "quarantine"


class SetAside(UserWarning):
    """A torn tail was moved out of a log before a write; the message says where to."""


def is_marker(line: bytes) -> bool:
    """A conflict marker line a plain-git merge leaves (<<<<<<<, =======, |||||||, >>>>>>>)."""
    body = line.rstrip(b"\n")
    return body.startswith((b"<<<<<<<", b">>>>>>>", b"|||||||")) or body == b"======="


def torn_at(data: bytes) -> int:
    """Where the torn tail of a log's last segment begins (len(data) when there is none): the
    bytes after the last newline, or else the last line when it does not decode as an event
    (a conflict marker is no torn line: it is what a merge left, and doctor removes it)."""
    if data and not data.endswith(b"\n"):
        return data.rfind(b"\n") + 1
    start = data.rfind(b"\n", 0, len(data) - 1) + 1
    if start >= len(data) or is_marker(data[start:]):
        return len(data)
    try:
        decode_unchecked(data[start:-1])
    except (msgspec.DecodeError, msgspec.ValidationError):
        return start
    return len(data)


def path(local_dir: Path, log: str) -> Path:
    name = "_workspace" if log == layout.WORKSPACE_LOG else layout.check_key(log)
    return local_dir / FOLDER / f"{name}.jsonl"


def keep(local_dir: Path, log: str, lines: list[bytes]) -> Path:
    """Append `lines` (each given a newline if it lacks one) to the log's quarantine file, durably."""
    target = path(local_dir, log)
    target.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join(line if line.endswith(b"\n") else line + b"\n" for line in lines)
    with open(target, "ab") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return target


class Tail(NamedTuple):
    """A log's segment names and its last segment's bytes once whole (None: no segment)."""

    names: list[str]
    data: bytes | None


def whole_tail(root: Path, log: str) -> Tail:
    """Move the torn tail of `log`'s last segment to its quarantine file (kept there first,
    then cut from the segment), answering what was listed and read, which an append needs.
    The caller holds the store lock."""
    names = layout.segments(root, log)
    if not names:
        return Tail(names, None)
    rel = f"{layout.log_dir(log)}/{names[-1]}"
    with open(os.open(root / rel, os.O_RDWR | os.O_NOFOLLOW), "r+b") as segment:
        data = segment.read()
        cut = torn_at(data)
        if cut == len(data):
            return Tail(names, data)
        target = keep(root / layout.LOCAL_DIR, log, [data[cut:]])
        segment.truncate(cut)
        os.fsync(segment.fileno())
    warnings.warn(
        f"{rel} ended in a torn line (a write cut short by a crash); it was moved to {target} "
        "and is not part of the log",
        SetAside,
        stacklevel=3,  # the caller of the append
    )
    return Tail(names, data[:cut])
