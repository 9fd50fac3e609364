"""The fold cache: a snapshot of a log's folded state, advanced by the bytes appended since.

`.local/cache/<log>.msgpack` records how far each segment was read, a digest of the last
segment's folded bytes, the last folded id, the state and the quarantined lines. When the
old segments are unchanged and only the last one grew (or newer ones appeared), only the
new bytes are read and folded; anything else refolds the whole log. The snapshot is written
back only when it was rebuilt or the tail was long, since a big one costs to write.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import itertools
import mmap
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import msgspec

from service.model import fold, state
from service.model.events import Event
from service.model.fold import fold_all
from service.model.state import State
from service.store import layout
from service.store.segments import Chunk, Mark, Quarantine, scan

CACHE_FORMAT = 1
REWRITE_TAIL = 2000
_CONFLICT = "conflicting-copies"


class Snapshot(msgspec.Struct, gc=False):
    format: int
    model: str
    segments: list[Mark]
    digest: str
    last_id: str | None
    state: State
    quarantined: list[Quarantine]


_decoder = msgspec.msgpack.Decoder(Snapshot)
_encoder = msgspec.msgpack.Encoder()


@functools.cache
def model_fingerprint() -> str:
    """A digest of the model's code, so a snapshot made by other code is never reused."""
    hasher = hashlib.blake2b(str(CACHE_FORMAT).encode(), digest_size=16)
    package = Path(fold.__file__).parent if fold.__file__ else None
    sources = sorted(package.glob("*.py")) if package is not None else []
    for source in sources:
        hasher.update(source.name.encode() + b"\0" + source.read_bytes())
    if not sources:  # no source files (a frozen build): the schema of the state at least
        hasher.update(msgspec.json.encode(msgspec.json.schema(state.State)))
    return hasher.hexdigest()


class Position(Protocol):
    """How far a log was folded: segment marks, digest of the last one, last folded id."""

    @property
    def segments(self) -> list[Mark]: ...

    @property
    def digest(self) -> str: ...

    @property
    def last_id(self) -> str | None: ...


def folded(root: Path, log: str) -> tuple[State, list[Quarantine]]:
    """The log's state and quarantined lines, through the cache."""
    current, fragment = snapshot(root, log)
    return current.state, current.quarantined + fragment


def snapshot(root: Path, log: str) -> tuple[Snapshot, list[Quarantine]]:
    """The log folded to its end, with the position it was folded to (one consistent read),
    and the quarantine entry of an unterminated last line, which is not folded yet."""
    names = layout.segments(root, log)
    path = layout.cache_file(root, log)
    current = _load(path)
    found = tail(root, log, names, current) if current is not None else None
    if current is None or found is None or not extends(current, found.events):
        return _rebuild(root, log, names, path)
    advance(current.state, found.events)
    current.quarantined.extend(found.quarantined)
    current.segments = current.segments[:-1] + found.marks
    current.digest = found.digest
    current.last_id = current.state.last_id
    if len(found.events) >= REWRITE_TAIL:
        _save(path, current)
    return current, found.fragment


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic GC while building millions of acyclic objects (4x faster decode).

    Afterwards the new objects are moved straight to the oldest generation (freeze, then
    unfreeze: two list splices), so the next young collection does not walk them all.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        if was_enabled:
            gc.enable()


def _load(path: Path) -> Snapshot | None:
    try:
        with (
            open(path, "rb") as handle,
            mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data,
            paused_gc(),
        ):
            snapshot = _decoder.decode(data)
    except (OSError, ValueError, msgspec.DecodeError, msgspec.ValidationError):
        return None  # missing, empty, corrupt or from another version: rebuilt
    if snapshot.format != CACHE_FORMAT or snapshot.model != model_fingerprint():
        return None
    return snapshot


def _save(path: Path, snapshot: Snapshot) -> None:
    with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
        layout.atomic_write(path, _encoder.encode(snapshot), durable=False)


def tail(root: Path, log: str, names: list[str], position: Position) -> Chunk | None:
    """The events after `position`, or None when the segments it records changed."""
    marks = position.segments
    if not marks:
        return scan(root, log, names) if names else Chunk([], [], [], [], position.digest, "")
    if names[: len(marks)] != [m.name for m in marks]:
        return None
    for mark in marks[:-1]:
        stat = _stat(root, log, mark.name)
        if stat is None or (stat.st_size, stat.st_mtime_ns) != (mark.size, mark.mtime_ns):
            return None
    last = marks[-1]
    found = scan(root, log, names[len(marks) - 1 :], offset=last.size)
    if found.prefix_digest != position.digest or found.marks[0].size < last.size:
        return None
    return found


def _stat(root: Path, log: str, name: str) -> os.stat_result | None:
    try:
        return os.stat(root / layout.log_dir(log) / name)
    except OSError:
        return None


def extends(position: Position, events: list[Event]) -> bool:
    """True when `events` can be folded on top: every id after the last, in order."""
    previous = position.last_id
    for event in events:
        if previous is not None and event.id <= previous:
            return False
        previous = event.id
    return True


def advance(current: State, tail: list[Event]) -> None:
    """fold() the tail, keeping fold_all's order: its duplicate-copy signals come last."""
    if not tail:
        return
    conflicts = [s for s in current.signals if s.kind == _CONFLICT]
    if conflicts:
        current.signals = [s for s in current.signals if s.kind != _CONFLICT]
    fold.fold(tail, current)
    current.signals.extend(conflicts)


def fold_log(log_events: list[Event]) -> State:
    """fold_all, skipping its sort when the file order is already strictly by id."""
    ordered = all(a.id < b.id for a, b in itertools.pairwise(log_events))
    return fold.fold(log_events) if ordered else fold_all(log_events)


def _rebuild(root: Path, log: str, names: list[str], path: Path) -> tuple[Snapshot, list[Quarantine]]:
    with paused_gc():
        chunk = scan(root, log, names)
        result = fold_log(chunk.events)
    rebuilt = Snapshot(
        CACHE_FORMAT,
        model_fingerprint(),
        chunk.marks,
        chunk.digest,
        result.last_id,
        result,
        chunk.quarantined,
    )
    if names:
        _save(path, rebuilt)
    return rebuilt, chunk.fragment


def drop(root: Path, log: str) -> None:
    """Forget every cache of a log (its snapshot and hot slice): the next read rebuilds them."""
    base = layout.cache_file(root, log)
    for path in (base, base.with_suffix(".hot.msgpack")):
        with contextlib.suppress(OSError):
            path.unlink()
