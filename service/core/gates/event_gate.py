"""The append gate's rules for one new event, pure: what a store checks before it writes a line.

`admitted` returns an event's canonical line when it passes every check (an id, of its log, a
type a command writes and no import's mark, a payload that decodes by its type, within the
event cap, through the sanitize gate); `in_order` checks that a batch's ids strictly increase
after its log's last. The store on disk (`service/adapters/store/append.py`) and the in-memory store
(`service/app/memory.py`) both write only what these pass.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from service.core.errors import Invalid
from service.core.events import ids, order
from service.core.events.events import MAX_EVENT_BYTES, WORKSPACE_LOG, WRITABLE, Event, canonical, payload_of
from service.core.ledger import completion

_plain = msgspec.json.Decoder(dict[str, object])


def display(log: str) -> str:
    """How a log is named in messages and commit subjects."""
    return "workspace" if log == WORKSPACE_LOG else f"projects/{log}"


def in_order(events: list[Event], last_id: str | None) -> list[Event]:
    """`events` when their ids strictly increase after `last_id`, else Invalid."""
    found = order.not_after((e.id for e in events), last_id)
    if found is not None:
        raise Invalid(
            f"event {found[0]} is not after {found[1]}, the last id of its log; "
            "take ids from the transaction's next_ids()"
        )
    return events


def admitted(log: str, event: Event, *, writable: bool, local: Sequence[str]) -> bytes:
    """The canonical line of an event that passes every check; Invalid or Refused if not.
    `writable`: only the types a command writes (an import keeps legacy and unknown ones)."""
    if not ids.is_id(event.id):
        raise Invalid(f"{event.id!r} is not an id (26 lowercase Crockford base32 characters)")
    if event.project != log:
        raise Invalid(f"event {event.id} belongs to project {event.project!r}, not to {display(log)}")
    if writable and event.type not in WRITABLE:
        known = ", ".join(sorted(WRITABLE))
        raise Invalid(f"{event.type!r} is not a type any command writes; known: {known}")
    if writable and completion.IMPORTED in (event.refs or {}):
        raise Invalid(f"event {event.id}: refs.{completion.IMPORTED} is written by an import alone")
    try:
        payload_of(event)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise Invalid(f"event {event.id} ({event.type}) has a malformed payload: {exc}") from exc
    line = canonical(event)
    if len(line) > MAX_EVENT_BYTES:
        raise Invalid(
            f"event {event.id} is {len(line):,} bytes, over the cap of {MAX_EVENT_BYTES:,}; "
            "keep long material in a file of the project and refer to it"
        )
    from service.core.gates.sanitize import check_event  # the one sanitize gate

    check_event(_plain.decode(line), local=local)
    return line
