"""Reading logs: segment files to events, with unreadable lines quarantined, never fatal.

Fast path: a segment is read in one go and decoded as one JSON array (its newlines turned
into commas); when that fails or disagrees with the line count, every line is decoded alone
and the ones that fail are quarantined with their file and line number.

Segments are opened only through `read_segment` and `open_append` (`O_NOFOLLOW`, regular files
only: `NotRegular` otherwise), so a symbolic link in a log folder is neither read, appended to,
committed nor pushed.

Each segment's greatest id is read off its canonical lines' starts and kept per size and mtime,
in memory and in `.local/cache/<log>.ids.msgpack` (`greatest_ids`): `read_after` (`GET
…/events?after=`, a resumed stream) and `Store.newest` (`self log -n N`) decode only the
segments that can hold the events asked for, whatever the file order (a sync or an import may
append older ids after newer ones). A record's history reads only the segments whose bytes hold
its id (`holding`, `Store.holding`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import msgspec

from service.adapters.store import layout
from service.adapters.store.errors import NotRegular
from service.core.events.events import Event, decode_unchecked

_segment_decoder = msgspec.json.Decoder(list[Event])
UNTERMINATED = "unterminated last line (a write in progress, or a crash during one)"


class Quarantine(msgspec.Struct, frozen=True, gc=False):
    """A line the reader could not take as an event: where it is and why."""

    file: str
    line: int
    reason: str


class Log(msgspec.Struct, gc=False):
    events: list[Event] = msgspec.field(default_factory=list)
    quarantined: list[Quarantine] = msgspec.field(default_factory=list)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def read_segment(path: Path) -> tuple[bytes, int]:
    """A segment's bytes and mtime (ns), never through a symbolic link: a link in a log
    folder would make a read, and the append after it, reach outside the store."""
    fd = _open(path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(), os.fstat(handle.fileno()).st_mtime_ns


def open_append(path: Path) -> int:
    """A descriptor to append to a segment (made if missing), never through a symbolic link."""
    return _open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)


def _open(path: Path, flags: int) -> int:
    try:
        fd = os.open(path, flags | _NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegular(path) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotRegular(path)
    return fd


def complete(data: bytes) -> tuple[bytes, bytes]:
    """Split off an unterminated trailing fragment: (complete lines, fragment)."""
    if not data or data.endswith(b"\n"):
        return data, b""
    cut = data.rfind(b"\n") + 1
    return data[:cut], data[cut:]


def decode(data: bytes, file: str, first_line: int = 1) -> tuple[list[Event], list[Quarantine]]:
    """Decode newline-separated events; `first_line` is the 1-based number of data's first line."""
    if not data:
        return [], []
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    body = data[:-1] if data.endswith(b"\n") else data
    try:
        events = _segment_decoder.decode(b"[" + body.replace(b"\n", b",") + b"]")
    except (msgspec.DecodeError, msgspec.ValidationError):
        events = None
    if events is not None and len(events) == lines:
        return events, []
    return _decode_lines(body.split(b"\n"), file, first_line)


def _decode_lines(lines: list[bytes], file: str, first: int) -> tuple[list[Event], list[Quarantine]]:
    events: list[Event] = []
    bad: list[Quarantine] = []
    for number, line in enumerate(lines, first):
        if not line.strip():
            bad.append(Quarantine(file, number, "blank line"))
            continue
        try:
            events.append(decode_unchecked(line))
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            bad.append(Quarantine(file, number, str(exc)))
    return events, bad


def fragment(data: bytes, file: str) -> list[Quarantine]:
    """The quarantine entry for an unterminated fragment at the end of `data`, if any."""
    body, rest = complete(data)
    if not rest:
        return []
    return [Quarantine(file, body.count(b"\n") + 1, UNTERMINATED)]


class Mark(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """How far a segment file was read: its name, bytes consumed, and mtime when read."""

    name: str
    size: int
    mtime_ns: int


class Chunk(msgspec.Struct, gc=False):
    """What a scan of some segments found, and where it stopped."""

    events: list[Event]
    quarantined: list[Quarantine]
    fragment: list[Quarantine]
    marks: list[Mark]
    digest: str
    prefix_digest: str


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def scan(root: Path, log: str, names: list[str], offset: int = 0) -> Chunk:
    """Read `names` (the last of which is the log's last segment), the first from `offset`."""
    chunk = Chunk([], [], [], [], digest(b""), digest(b""))
    for position, name in enumerate(names):
        _scan_one(
            root, log, name, chunk, offset=offset if position == 0 else 0, last=position == len(names) - 1
        )
    return chunk


def scan_each(root: Path, log: str, names: list[str]) -> Iterator[Chunk]:
    """`scan` of the whole log one segment at a time: each chunk holds one segment's events,
    quarantined lines and mark (and, for the last, its fragment and digest)."""
    for position, name in enumerate(names):
        chunk = Chunk([], [], [], [], digest(b""), digest(b""))
        _scan_one(root, log, name, chunk, offset=0, last=position == len(names) - 1)
        yield chunk


def _scan_one(root: Path, log: str, name: str, chunk: Chunk, *, offset: int, last: bool) -> None:
    file = f"{layout.log_dir(log)}/{name}"
    data, mtime = read_segment(root / file)
    start, first_line = 0, 1
    if offset:
        prefix = data[:offset]
        chunk.prefix_digest = digest(prefix)
        start, first_line = len(prefix), prefix.count(b"\n") + 1
    if last:
        chunk.fragment = fragment(data, file)
        data = complete(data)[0]
        chunk.digest = digest(data)
    events, bad = decode(data[start:], file, first_line)
    chunk.events.extend(events)
    chunk.quarantined.extend(bad)
    chunk.marks.append(Mark(name, len(data), mtime))


def read_log(root: Path, log: str) -> Log:
    """Every event of a log in file order; unreadable lines are quarantined."""
    chunk = scan(root, log, layout.segments(root, log))
    return Log(chunk.events, chunk.quarantined + chunk.fragment)


def holding(root: Path, log: str, text: str) -> list[Event]:
    """The events of a log whose line holds `text` (and some whose line only nearly does),
    in file order: only the segments whose bytes hold it are decoded. Lines are canonical
    JSON, so an id a payload or a ref names is there as it is written."""
    needle = text.encode("utf-8")
    names = layout.segments(root, log)
    found: list[Event] = []
    for position, name in enumerate(names):
        file = f"{layout.log_dir(log)}/{name}"
        data, _ = read_segment(root / file)
        if position == len(names) - 1:
            data = complete(data)[0]
        if needle in data:
            found += decode(data, file)[0]
    return found


def read_after(root: Path, log: str, after: str | None) -> list[Event]:
    """The events of a log with an id after `after`, in id order. Only the segments holding
    such an id are decoded (`greatest_ids`): the last ones as a log grows by appends, any of
    them when a sync or an import appended older ids after newer ones."""
    found: list[Event] = []
    for name, greatest in greatest_ids(root, log):
        if after is None or greatest > after:
            found += [e for e in _events(root, log, name) if after is None or e.id > after]
    return sorted(found, key=_event_id)


def read_ids(root: Path, log: str, wanted: set[str]) -> dict[str, Event]:
    """The events of a log whose id is in `wanted`, by id. Only the segments that can hold
    one are decoded: those whose greatest id is not below the least wanted."""
    found: dict[str, Event] = {}
    least = min(wanted, default=None)
    if least is None:
        return found
    for name, greatest in greatest_ids(root, log):
        if greatest >= least:
            found.update((e.id, e) for e in _events(root, log, name) if e.id in wanted)
    return found


def ids_of(root: Path, log: str) -> list[str]:
    """Every id of a log, in file order: read off canonical lines' starts, else decoded."""
    found: list[str] = []
    for name in layout.segments(root, log):
        data, _ = read_segment(root / layout.log_dir(log) / name)
        lines = complete(data)[0].splitlines()
        if all(line.startswith(b'{"id":"') and line[33:35] == b'",' for line in lines):
            found += [line[_ID_AT].decode("ascii", "replace") for line in lines]
        else:
            found += [e.id for e in decode(b"\n".join(lines) + b"\n" if lines else b"", name)[0]]
    return found


def newest(root: Path, log: str, n: int) -> list[Event]:
    """The `n` events of a log with the greatest ids, in id order: segments are decoded from
    the one with the greatest id down, until the next cannot hold one of the `n`."""
    found: list[Event] = []
    for name, greatest in sorted(greatest_ids(root, log), key=lambda kept: kept[1], reverse=True):
        if len(found) >= n and greatest < found[-n].id:
            break
        found = sorted([*found, *_events(root, log, name)], key=_event_id)
    return found[-n:]


def _events(root: Path, log: str, name: str) -> list[Event]:
    data, _ = read_segment(root / layout.log_dir(log) / name)
    return decode(complete(data)[0], f"{layout.log_dir(log)}/{name}")[0]


class _Greatest(msgspec.Struct, frozen=True, array_like=True, gc=False):
    size: int
    mtime: int
    id: str


_GREATEST: dict[Path, dict[str, _Greatest]] = {}  # a log's folder: each segment's, kept
_greatest_decoder = msgspec.msgpack.Decoder(dict[str, _Greatest])
_ID_AT = slice(7, 7 + 26)  # a canonical event line starts `{"id":"` and its id


def greatest_ids(root: Path, log: str) -> list[tuple[str, str]]:
    """Each segment of a log, in order, with its greatest id. Read off its lines' starts and
    kept per size and mtime (only the last segment grows), in memory and in
    `.local/cache/<log>.ids.msgpack`, so a process reads only the segments that changed."""
    folder = root / layout.log_dir(log)
    kept = _GREATEST.get(folder)
    if kept is None:
        kept = _GREATEST[folder] = _load_greatest(root, log)
    changed = False
    found: list[tuple[str, str]] = []
    for name in layout.segments(root, log):
        info = os.stat(folder / name, follow_symlinks=False)
        held = kept.get(name)
        if held is None or (held.size, held.mtime) != (info.st_size, info.st_mtime_ns):
            data, mtime = read_segment(folder / name)
            held = kept[name] = _Greatest(len(data), mtime, _greatest_id(complete(data)[0]))
            changed = True
        found.append((name, held.id))
    if changed:
        with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
            layout.atomic_write(_greatest_path(root, log), msgspec.msgpack.encode(kept), durable=False)
    return found


def _load_greatest(root: Path, log: str) -> dict[str, _Greatest]:
    try:
        return _greatest_decoder.decode(_greatest_path(root, log).read_bytes())
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return {}


def _greatest_path(root: Path, log: str) -> Path:
    return layout.cache_file(root, log).with_suffix(".ids.msgpack")


def _greatest_id(data: bytes) -> str:
    """The greatest id among a segment's events: read where canonical lines hold it, else
    decoded ("" when it holds none)."""
    lines = data.splitlines()
    if all(line.startswith(b'{"id":"') and line[33:35] == b'",' for line in lines):
        return max((line[_ID_AT].decode("ascii", "replace") for line in lines), default="")
    events, _ = decode(data, "")
    return max((e.id for e in events), default="")


def _event_id(event: Event) -> str:
    return event.id
