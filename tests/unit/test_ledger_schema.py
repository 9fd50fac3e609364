"""The exported JSON Schema (draft 2020-12) accepts exactly the events the fold reads as
typed, and every ledger row the views print."""

from __future__ import annotations

import json

import jsonschema
import msgspec
from hypothesis import HealthCheck, given, settings

from service.core.events.events import Event, as_dict, canonical, payload_of
from service.core.events.schema import document
from service.core.fold.fold import fold_all
from service.core.projections.views import entity_row, ledger_extras
from tests.support.strategies import histories
from tests.unit.test_ledger_properties import ledger_histories

SCHEMA = document()
EVENTS = jsonschema.Draft202012Validator(SCHEMA)
ROWS = {
    k: jsonschema.Draft202012Validator({**SCHEMA, "$ref": f"#/$defs/{k}"})
    for k in ("claim", "decision", "question")
}
STATES = {
    "claim": ("unassessed", "accepted", "disputed", "rejected"),
    "decision": ("adopted", "revoked"),
    "question": ("open",),
}
PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert {"Event", "claim", "decision", "question"} <= set(SCHEMA["$defs"])


def typed(event: Event) -> bool:
    try:
        payload_of(event)
    except msgspec.ValidationError:
        return False
    return True


def check(events: list[Event]) -> None:
    for event in events:
        line = json.loads(canonical(event))
        valid = EVENTS.is_valid(line)
        assert valid == typed(event), (line, [e.message for e in EVENTS.iter_errors(line)])


@PROPERTY
@given(events=histories(max_steps=30))
def test_core_events_validate_as_the_fold_reads_them(events: list[Event]) -> None:
    check(events)


@PROPERTY
@given(events=ledger_histories(max_steps=25))
def test_ledger_events_and_rows_validate(events: list[Event]) -> None:
    check(events)
    state = fold_all(events)
    extras = ledger_extras(state)
    for record_id, extra in extras.items():
        row = entity_row(state.entities[record_id], record_id, extra)
        kind = extra["kind"]
        if row["state"] not in STATES[kind]:
            continue  # a state another tool wrote: read as it is, outside the schema's enum
        errors = [e.message for e in ROWS[kind].iter_errors(json.loads(msgspec.json.encode(row)))]
        assert not errors, (kind, row, errors)


def test_an_unknown_event_type_keeps_any_payload() -> None:
    line = {
        "id": "01m8ny75fdy93k3mh0rjgk54hg",
        "ts": "2026-11-30T09:57:45.069Z",
        "type": "zz.future",
        "origin": {"actor": "agent", "confirmed": True},
        "project": "app",
        "payload": {"anything": [1]},
    }
    assert EVENTS.is_valid(line)
    assert not EVENTS.is_valid({**line, "id": "not an id"})
    assert not EVENTS.is_valid({**line, "type": "entity.assessed", "payload": {"entity": "x"}})
    assert as_dict  # the CLI's dump of an event is the canonical line
