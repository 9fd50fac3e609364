"""Logs as lines of bytes: ids found cheaply, local-only lines picked, segments laid out.

Sync never re-encodes an event: lines travel as the bytes they are, so a replica's log is
byte-identical to the remote's. A canonical line starts with `{"id":"` (keys are sorted and
`id` sorts first), so its id is a slice; anything else is decoded to find it.
"""

from __future__ import annotations

import msgspec

from service.adapters.store.aside import is_marker as is_marker  # sync reads markers through logs
from service.core.events import ids, order
from service.core.events.events import decode_unchecked

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


def repaired(lines: list[bytes]) -> Repair:
    """The lines without conflict markers and with one copy of each id, the winner (`order`),
    where it stood. Only markers and the other copies go."""
    kept = order.winners((found, line) for line in lines if not is_marker(line) and (found := line_id(line)))
    out = Repair([])
    for line in lines:
        if is_marker(line):
            out.markers += 1
            continue
        found = line_id(line)
        if found is not None:
            if kept.get(found) != line:
                out.duplicates += 1
                continue
            del kept[found]  # a second copy in the same bytes goes too
        out.lines.append(line)
    return out


class Picked(msgspec.Struct):
    """What a local log holds that the remote's does not."""

    events: list[bytes]  # lines of events whose ids the remote lacks, in id order, one per id
    unreadable: list[bytes]  # local lines that are not events and not on the remote


def local_only(local: list[bytes], remote_ids: set[str], remote_lines: set[bytes] | None = None) -> Picked:
    """The local lines to append after the remote's: the winning copy of each id the remote
    lacks (`order`), in id order; and the local lines that are not events, but copies of an id
    an event wins."""
    named = [(line_id(line), line) for line in local if not is_marker(line)]
    named = [(found, line) for found, line in named if found not in remote_ids]
    readable = [(found, line) for found, line in named if found is not None and is_event(line)]
    kept = order.winners(readable)
    unreadable = [
        line
        for found, line in named
        if (found is None or found not in kept) and (remote_lines is None or line not in remote_lines)
    ]
    return Picked([kept[k] for k in sorted(kept)], unreadable)
