"""Logs as lines of bytes: ids found cheaply, local-only lines picked, segments laid out.

Sync never re-encodes an event: lines travel as the bytes they are, so a replica's log is
byte-identical to the remote's. A canonical line starts with `{"id":"` (keys are sorted and
`id` sorts first), so its id is a slice; anything else is decoded to find it.
"""

from __future__ import annotations

import msgspec

from service.model import ids
from service.model.events import decode_unchecked
from service.store.aside import is_marker

_PREFIX = b'{"id":"'
_plain = msgspec.json.Decoder()


def lines_of(data: bytes) -> list[bytes]:
    """The lines of a segment, each ending in a newline (an unterminated last line gets one)."""
    if not data:
        return []
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return [part + b"\n" for part in parts]


def line_id(line: bytes) -> str | None:
    """The id a line claims, or None when it names none (blank, not JSON, no id)."""
    if line.startswith(_PREFIX) and line[33:34] == b'"':
        found = line[7:33].decode("ascii", "replace")
        if ids.is_id(found):
            return found
    try:
        value = _plain.decode(line)
    except msgspec.DecodeError:
        return None
    if isinstance(value, dict):
        claimed = value.get("id")
        if isinstance(claimed, str) and ids.is_id(claimed):
            return claimed
    return None


def is_event(line: bytes) -> bool:
    """True when the line decodes as an event (what the reader would fold, not quarantine)."""
    try:
        decode_unchecked(line.rstrip(b"\n"))
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    return True


def id_set(lines: list[bytes]) -> set[str]:
    found = set()
    for line in lines:
        if line.startswith(_PREFIX) and line[33:34] == b'"':
            found.add(line[7:33].decode("ascii", "replace"))
        else:
            other = line_id(line)
            if other is not None:
                found.add(other)
    return found


class Repair(msgspec.Struct):
    lines: list[bytes]
    markers: int = 0
    duplicates: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.markers or self.duplicates)


def repaired(lines: list[bytes], seen: set[str] | None = None) -> Repair:
    """The lines without conflict markers and without second copies of an id (the first copy,
    in file order, stays). No event is lost: only markers and repeats go."""
    known = set() if seen is None else set(seen)
    out = Repair([])
    for line in lines:
        if is_marker(line):
            out.markers += 1
            continue
        found = line_id(line)
        if found is not None:
            if found in known:
                out.duplicates += 1
                continue
            known.add(found)
        out.lines.append(line)
    return out


class Picked(msgspec.Struct):
    """What a local log holds that the remote's does not."""

    events: list[bytes]  # lines of events whose ids the remote lacks, in id order, one per id
    unreadable: list[bytes]  # local lines that are not events and not on the remote


def local_only(local: list[bytes], remote_ids: set[str], remote_lines: set[bytes] | None = None) -> Picked:
    """The local lines to append after the remote's: one copy per id, in id order."""
    chosen: dict[str, bytes] = {}
    unreadable: list[bytes] = []
    for line in local:
        if is_marker(line):
            continue
        found = line_id(line)
        if found is not None and found in remote_ids:
            continue
        if found is not None and found not in chosen and is_event(line):
            chosen[found] = line
        elif (found is None or found not in chosen) and (remote_lines is None or line not in remote_lines):
            unreadable.append(line)
    return Picked([chosen[k] for k in sorted(chosen)], unreadable)
