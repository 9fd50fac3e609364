"""The intake gate's per-line checks for a whole segment at once, when it holds only events.

`unchecked` proves with one decode and one encode of the whole segment, and a few scans of its
bytes (`sanitize_fast`), what the intake gate checks line by line: every line within the
event cap, an event in canonical bytes with a valid id, of its log, whose payload decodes by
its type's struct, and whose keys and strings pass the sanitize gate. It returns the lines it
could not prove, for the caller to check one by one; for a segment that is not all such
events (a conflict marker, a line that is not JSON, one that fails a check) it returns None
and the caller checks every line, so a refusal names the same first offending line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from service.core.events import ids
from service.core.events.events import MAX_EVENT_BYTES, Event, Origin, payload_type
from service.core.gates import sanitize, sanitize_fast

_events = msgspec.json.Decoder(list[Event])
_plain = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder(order="sorted")
_typed: dict[type, msgspec.json.Decoder[list[object]]] = {}
_ENVELOPE_KEYS = frozenset(Event.__struct_fields__) | frozenset(Origin.__struct_fields__)


def unchecked(lines: Sequence[bytes], log: str, local: Sequence[str] = ()) -> set[int] | None:
    """The indices of `lines` (each newline-terminated) still to check one by one, or None
    when the segment is not a batch of canonical events of `log` (check every line)."""
    if not lines or max(map(len, lines)) > MAX_EVENT_BYTES or not all(line.endswith(b"\n") for line in lines):
        return None
    body = b"[" + b",".join(line[:-1] for line in lines) + b"]"
    try:
        events = _events.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if len(events) != len(lines) or _encoder.encode(events) != body:
        return None  # the envelope is not in canonical bytes
    if not all(event.project == log and ids.is_id(event.id) for event in events):
        return None
    payloads = _canonical_payloads(events)
    if payloads is None or not _typed_payloads(events):
        return None
    refs = [event.refs for event in events if event.refs is not None]
    if _bad_keys(_keys([*payloads, *refs]) | _ENVELOPE_KEYS):
        return None
    return sanitize_fast.suspect_lines(b"".join(lines), local)


def _canonical_payloads(events: list[Event]) -> list[object] | None:
    """Every payload decoded, when every one is in canonical bytes; else None."""
    raw = b"[" + b",".join(event.payload for event in events) + b"]"
    try:
        payloads: list[object] = _plain.decode(raw)
    except msgspec.DecodeError:
        return None
    return payloads if _encoder.encode(payloads) == raw else None


def _typed_payloads(events: list[Event]) -> bool:
    """Whether every payload of a known type decodes by its struct (as `payload_of` does)."""
    by_type: dict[str, list[bytes]] = {}
    for event in events:
        by_type.setdefault(event.type, []).append(event.payload)
    for name, payloads in by_type.items():
        kind = payload_type(name)
        if kind is None:
            continue
        decoder = _typed.get(kind)
        if decoder is None:
            decoder = _typed[kind] = msgspec.json.Decoder(list[kind])  # type: ignore[valid-type]
        try:
            decoder.decode(b"[" + b",".join(payloads) + b"]")
        except (msgspec.DecodeError, msgspec.ValidationError):
            return False
    return True


def _keys(values: Iterable[object]) -> set[str]:
    """Every key of every object in `values`, at any depth."""
    found: set[str] = set()
    stack = [iter(values)]
    while stack:
        for item in stack.pop():
            if type(item) is dict:
                found.update(item)
                stack.append(iter(item.values()))
            elif type(item) is list:
                stack.append(iter(item))
    return found


def _bad_keys(keys: Iterable[str]) -> bool:
    """Whether a key names or holds a fact (`sanitize`'s key verdict, cached by key)."""
    return any(sanitize._key_verdict(key)[1] is not None for key in keys)
