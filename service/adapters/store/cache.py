"""The fold cache: a snapshot of a log's folded state, advanced by the bytes appended since.

`.local/cache/<log>.msgpack` records how far each segment was read, a digest of the last
segment's folded bytes, the last folded id, the state and the quarantined lines. When the
old segments are unchanged and only the last one grew (or newer ones appeared), only the
new bytes are read and folded. The snapshot is written back only when it was rebuilt or the
tail was long, since a big one costs to write.

A sync that does more than append (remote events put before local ones, or a merge) leaves
a snapshot that no longer matches the log. For that case `<log>.base.msgpack` keeps a
snapshot of a log as a remote held it after a sync (a hard link to the snapshot file, so
keeping it costs no write): whatever a later sync does, the published part stays in place.
The events after it are folded on top, in id order, when each is newer than its last id;
an event inserted before it (or a base that is no longer a prefix of the log) refolds the
whole log.

At the end of every sync whose result is the local head (`Store.synced`), the snapshot, if
there is one, becomes the base and the log's end is noted in `<log>.synced.msgpack`; a snapshot
that a later read folds to exactly that end becomes the base too (after a sync that was not an
append there is no snapshot: the next read makes it). When the snapshot no longer matches, the
base is checked the same way (its segments unchanged, its last one a byte prefix) and the
events after it are folded on top, one copy per id (`fold.distinct`).

A refold reads and folds one segment at a time while the file order is by id (`_streamed`:
memory holds the state and one segment's events; at a million events the events took more than
the state); a log out of order is read whole and folded by `fold_all`.
`tests/integration/test_sync_cache.py` checks the cached state against `fold_all` after random
appends, syncs and reads on two replicas, and that a sync inserting newer remote events folds
only the events after the base.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import mmap
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import msgspec

from service.adapters.store import layout
from service.adapters.store.segments import Chunk, Mark, Quarantine, complete, digest, scan, scan_each
from service.core.events import order
from service.core.events.events import Event
from service.core.fold import state
from service.core.fold.state import State

CACHE_FORMAT = 1
REWRITE_TAIL = 2000
_CONFLICT = "conflicting-copies"
BASE_SUFFIX = ".base.msgpack"
END_SUFFIX = ".synced.msgpack"


class Snapshot(msgspec.Struct, gc=False):
    format: int
    model: str
    segments: list[Mark]
    digest: str
    last_id: str | None
    state: State
    quarantined: list[Quarantine]


class End(msgspec.Struct, gc=False):
    """Where a log ended when a sync left it as a remote holds it."""

    segments: list[Mark]
    digest: str


_end_decoder = msgspec.msgpack.Decoder(End)
_encoder = msgspec.msgpack.Encoder()


@functools.cache
def _snapshot_decoder() -> msgspec.msgpack.Decoder[Snapshot]:
    return msgspec.msgpack.Decoder(Snapshot)


@functools.cache
def model_fingerprint() -> str:
    """A digest of the model's code, so a snapshot made by other code is never reused."""
    hasher = hashlib.blake2b(str(CACHE_FORMAT).encode(), digest_size=16)
    # the fold package's folder, found through the module already loaded: a cache hit folds nothing
    package = Path(state.__file__).parent if state.__file__ else None
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


def snapshot(root: Path, log: str, *, keep: bool = True) -> tuple[Snapshot, list[Quarantine]]:
    """The log folded to its end, with the position it was folded to (one consistent read),
    and the quarantine entry of an unterminated last line, which is not folded yet. With
    `keep` False a snapshot made anew is not written (the hot slice's first build: its
    encoding would be the largest thing in memory, and only whole-state reads load it)."""
    names = layout.segments(root, log)
    path = layout.cache_file(root, log)
    current = _load(path)
    found = tail(root, log, names, current) if current is not None else None
    if current is not None and found is not None and extends(current, found.events):
        _forward(current, found, found.events, [])
        if len(found.events) >= REWRITE_TAIL:
            _save(path, current)
        return current, found.fragment
    made, fragment = _from_base(root, log, names) or _rebuild(root, log, names)
    if names and keep:
        _save(path, made)
        if _at_end(root, log, made):
            _link(path, _base_path(root, log))
    return made, fragment


def _forward(current: Snapshot, found: Chunk, events: list[Event], conflicts: list[str]) -> None:
    """Fold `events` (the tail `found` read, in id order) into `current` and move its position."""
    advance(current.state, events, conflicts)
    current.quarantined.extend(found.quarantined)
    current.segments = current.segments[:-1] + found.marks
    current.digest = found.digest
    current.last_id = current.state.last_id


def _from_base(root: Path, log: str, names: list[str]) -> tuple[Snapshot, list[Quarantine]] | None:
    """The base advanced to the log's end, or None when it cannot be: no base, the log does not
    start with its bytes any more, or an event after it is older than its last id."""
    base = _load(_base_path(root, log))
    found = tail(root, log, names, base) if base is not None else None
    if base is None or found is None:
        return None
    from service.core.fold import fold

    events, conflicts = fold.distinct(found.events)
    if events and not order.after(events[0].id, base.last_id):
        return None
    _forward(base, found, events, conflicts)
    return base, found.fragment


def published(root: Path, log: str) -> None:
    """A sync left the log as a remote holds it (called under the store lock).

    The snapshot, if there is one, becomes the base; and where the log ends is noted, so that
    a snapshot folded to exactly there later becomes the base too (after a sync that was not
    an append there is none: the next read makes it).
    """
    _save_end(root, log, _end(root, log, layout.segments(root, log)))
    # Not checked against the log (that would read the whole snapshot on every sync): a
    # checkout that did more than append dropped it, so one that is left folded a prefix,
    # and a base is checked before it is used anyway.
    _link(layout.cache_file(root, log), _base_path(root, log))


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
            snapshot = _snapshot_decoder().decode(data)
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
    folder = os.fspath(root / layout.log_dir(log)) + os.sep  # one path, not one Path a segment
    for mark in marks[:-1]:
        try:
            stat = os.stat(folder + mark.name)
        except OSError:
            return None
        if stat.st_size != mark.size or stat.st_mtime_ns != mark.mtime_ns:
            return None
    last = marks[-1]
    found = scan(root, log, names[len(marks) - 1 :], offset=last.size)
    if found.prefix_digest != position.digest or found.marks[0].size < last.size:
        return None
    return found


def extends(position: Position, events: list[Event]) -> bool:
    """True when `events` can be folded on top: every id after the last, in order."""
    return order.ascending((e.id for e in events), position.last_id)


def advance(current: State, tail: list[Event], conflicts: list[str] | None = None) -> None:
    """fold() the tail, keeping fold_all's order: its duplicate-copy signals come last (those
    of `conflicts`, ids in the tail whose copies differ, after the ones already there)."""
    if not tail:
        return
    from service.core.fold import fold

    kept = [s for s in current.signals if s.kind == _CONFLICT]
    if kept:
        current.signals = [s for s in current.signals if s.kind != _CONFLICT]
    fold.fold(tail, current)
    current.signals.extend(kept)
    current.signals.extend(fold.conflict_signals(conflicts or []))


def fold_log(log_events: list[Event]) -> State:
    """fold_all, skipping its sort when the file order is already strictly by id."""
    from service.core.fold import fold

    ordered = order.ascending(e.id for e in log_events)
    return fold.fold(log_events) if ordered else fold.fold_all(log_events)


def _rebuild(root: Path, log: str, names: list[str]) -> tuple[Snapshot, list[Quarantine]]:
    with paused_gc():
        streamed = _streamed(root, log, names)
        if streamed is not None:
            return streamed
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
    return rebuilt, chunk.fragment


def _streamed(root: Path, log: str, names: list[str]) -> tuple[Snapshot, list[Quarantine]] | None:
    """The log folded a segment at a time, so memory holds the state and one segment's
    events, never every event (at a million events those took more than the state); None
    when its file order is not strictly by id (fold_all sorts the whole log then)."""
    from service.core.fold import fold

    made = Snapshot(CACHE_FORMAT, model_fingerprint(), [], digest(b""), None, State(), [])
    fragment: list[Quarantine] = []
    for chunk in scan_each(root, log, names):
        if not extends(made, chunk.events):
            return None
        fold.fold(chunk.events, made.state)
        made.last_id = made.state.last_id
        made.segments += chunk.marks
        made.quarantined += chunk.quarantined
        made.digest, fragment = chunk.digest, chunk.fragment
    return made, fragment


def drop(root: Path, log: str) -> None:
    """Forget a log's snapshot and hot slice: the next read makes them again (from the base,
    which stays: it is checked against the log before it is used)."""
    base = layout.cache_file(root, log)
    for path in (base, base.with_suffix(".hot.msgpack")):
        with contextlib.suppress(OSError):
            path.unlink()


# --- the base and the end of the published log -----------------------------------------------


def _base_path(root: Path, log: str) -> Path:
    return layout.cache_file(root, log).with_suffix(BASE_SUFFIX)


def _end_path(root: Path, log: str) -> Path:
    return layout.cache_file(root, log).with_suffix(END_SUFFIX)


def _end(root: Path, log: str, names: list[str]) -> End:
    """The position a scan of the whole log would reach, from the files' sizes and the last one's bytes."""
    folder = root / layout.log_dir(log)
    marks = []
    for name in names[:-1]:
        stat = os.stat(folder / name)
        marks.append(Mark(name, stat.st_size, stat.st_mtime_ns))
    if not names:
        return End([], digest(b""))
    mtime = os.stat(folder / names[-1]).st_mtime_ns
    data = complete((folder / names[-1]).read_bytes())[0]
    return End([*marks, Mark(names[-1], len(data), mtime)], digest(data))


def _at_end(root: Path, log: str, made: Snapshot) -> bool:
    try:
        end = _end_decoder.decode(_end_path(root, log).read_bytes())
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return False
    return end.segments == made.segments and end.digest == made.digest


def _save_end(root: Path, log: str, end: End) -> None:
    with contextlib.suppress(OSError):
        layout.atomic_write(_end_path(root, log), _encoder.encode(end), durable=False)


def _link(source: Path, target: Path) -> None:
    """Make `target` a second name of `source`'s file (snapshots are replaced, never written in
    place, so the link keeps the bytes it was made with); a copy where links are not allowed."""
    import secrets
    import shutil

    temporary = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        if not source.exists() or (target.exists() and os.path.samefile(source, target)):
            return
        try:
            os.link(source, temporary)
        except OSError:
            shutil.copyfile(source, temporary)
        os.replace(temporary, target)
    except OSError:
        pass
    finally:
        temporary.unlink(missing_ok=True)  # (a rename onto another name of the same file is a no-op)
