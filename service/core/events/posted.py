"""Events a client posts (`POST …/events`): what it may give, and the event the service makes
of it. Pure: the writer supplies the id, the time and the origin of the authenticated user.

A client gives the type, the project (its slug; "" is the workspace log), the payload and
optionally refs and an id. Giving the id makes a retried post idempotent: the same id with
the same content is the same event, written once.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from service.core.errors import Invalid
from service.core.events import ids
from service.core.events.events import WRITABLE, Event, Origin

MAX_EVENTS = 1000  # events in one post; a bigger batch is several posts
CREATES = frozenset({"entity.proposed", "entity.confirmed"})  # with text: a new record
_plain = msgspec.json.Decoder(dict[str, object])
_encode = msgspec.json.Encoder(order="sorted").encode


class NewEvent(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    type: str
    project: str
    payload: dict[str, Any]
    refs: dict[str, Any] | None = None
    id: str | None = None


class PostEvents(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    events: list[NewEvent]


class Posted(msgspec.Struct, frozen=True):
    """The answer to a post: the events' ids in the order given, the commit holding them,
    and whether every one was there already (a retry)."""

    ids: list[str]
    commit: str | None
    replayed: bool = False


def decode(body: bytes) -> PostEvents:
    """The body of a post, or Invalid naming what is wrong with it."""
    try:
        posted = msgspec.json.decode(body, type=PostEvents)
    except msgspec.ValidationError as exc:
        raise _unfit(str(exc)) from None
    except msgspec.DecodeError as exc:
        raise Invalid(f"the body is not JSON: {exc}", code="malformed") from None
    if not posted.events:
        raise Invalid("{events} is empty: post at least one event", code="missing-value", field="events")
    if len(posted.events) > MAX_EVENTS:
        raise Invalid(
            f"{{events}} holds {len(posted.events):,} events, over {MAX_EVENTS:,} a post: split it",
            code="too-large",
            field="events",
        )
    for n, new in enumerate(posted.events):
        check(new, n)
    return posted


SERVICE_SETS = ("ts", "origin")
_UNKNOWN = re.compile(r"unknown field `(\w+)` - at `\$\.events\[(\d+)\]`")


def _unfit(message: str) -> Invalid:
    """The refusal of a body that does not fit `PostEvents`, naming the field; the time and
    the origin of an event are the service's to set, and a client giving one is told so."""
    found = _UNKNOWN.search(message)
    if found is not None and found.group(1) in SERVICE_SETS:
        key, n = found.group(1), found.group(2)
        return Invalid(
            f"{{events[{n}].{key}}} is the service's to set (the time it writes the event, the "
            "token's user as its origin): leave it out; give type, project, payload, and refs or id",
            field=f"events[{n}].{key}",
        )
    return Invalid(f"the events body does not fit: {message}", code="malformed", field="events")


def check(new: NewEvent, n: int) -> None:
    """What can be judged of one event without the state: its type and its id's form."""
    if new.type not in WRITABLE:
        known = ", ".join(sorted(WRITABLE))
        raise Invalid(
            f"{{events[{n}].type}} {new.type!r} is not an event type selfhub writes; known: {known}",
            field=f"events[{n}].type",
        )
    if new.id is not None and not ids.is_id(new.id):
        raise Invalid(
            f"{{events[{n}].id}} {new.id!r} is not an id (26 lowercase Crockford base32 characters); "
            "leave it out and the service gives one",
            field=f"events[{n}].id",
        )


def make(new: NewEvent, event_id: str, ts: str, origin: Origin) -> Event:
    """The event the service writes for `new`: a new record's `payload.entity` is the event's
    own id when the client left it out, as the CLI writes it."""
    payload = dict(new.payload)
    if new.type in CREATES and "entity" not in payload and payload.get("text") is not None:
        payload["entity"] = event_id
    return Event(event_id, ts, new.type, origin, new.project, msgspec.Raw(_encode(payload)), new.refs)


def same(new: NewEvent, held: Event) -> bool:
    """Whether `held` (an event already in the log) is what `new` asks for: a retry. The time
    and the origin are the service's, so they are not compared."""
    made = make(new, held.id, held.ts, held.origin)
    return (
        made.type == held.type
        and made.project == held.project
        and _plain.decode(made.payload) == _plain.decode(held.payload)
        and (made.refs or None) == (held.refs or None)
    )
