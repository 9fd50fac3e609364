"""Events a client posts: what the body may hold, the event made of it, and when a repeated
post is the same event."""

from __future__ import annotations

import msgspec
import pytest

from service.core.errors import Invalid
from service.core.events import posted
from service.core.events.events import Assertion, Origin, payload_of

ANN = Origin("human", True, None, "ann")
ID = "01m8qewztx0rz3pd0v34m56etm"


def body(*events: dict[str, object]) -> bytes:
    return msgspec.json.encode({"events": list(events)})


def note(**extra: object) -> dict[str, object]:
    return {"type": "entity.confirmed", "project": "web", "payload": {"text": "a note"}, **extra}


def test_a_new_records_entity_is_its_events_id() -> None:
    (new,) = posted.decode(body(note())).events
    event = posted.make(new, ID, "2026-12-01T00:00:00.000Z", ANN)
    payload = payload_of(event)
    assert isinstance(payload, Assertion) and payload.entity == ID
    assert event.origin.by == "ann" and event.project == "web"


def test_a_confirmation_keeps_the_entity_it_names() -> None:
    (new,) = posted.decode(body(note(payload={"entity": "0" * 26}))).events
    assert msgspec.json.decode(posted.make(new, ID, "t", ANN).payload) == {"entity": "0" * 26}


def test_a_retry_is_the_same_event_whatever_its_time_and_origin() -> None:
    (new,) = posted.decode(body(note(id=ID))).events
    held = posted.make(new, ID, "2026-12-01T00:00:00.000Z", ANN)
    assert posted.same(new, msgspec.structs.replace(held, ts="2027-01-01T00:00:00.000Z"))
    (other,) = posted.decode(body(note(id=ID, payload={"text": "another note"}))).events
    assert not posted.same(other, held)


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b"{x", None),
        (b'{"events": []}', "events"),
        (body(note(type="x.y")), "events[0].type"),
        (body(note(), note(id="nope")), "events[1].id"),
        (body(*[note()] * (posted.MAX_EVENTS + 1)), "events"),
        (b'{"events": [{"type": "entity.confirmed"}]}', "events"),
        (body(note(), note(ts="2026-01-01T00:00:00.000Z")), "events[1].ts"),
        (body(note(origin={"actor": "human", "by": "eve"})), "events[0].origin"),
    ],
)
def test_a_bad_body_names_its_field(raw: bytes, field: str | None) -> None:
    with pytest.raises(Invalid) as caught:
        posted.decode(raw)
    assert caught.value.fields == ((field,) if field else ())
