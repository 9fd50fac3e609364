"""JSON Schema (draft 2020-12) of the wire format and of the ledger's records.

`document()` is one schema whose root validates one event line: the envelope, and the
payload by the event's type (the typed payload structs, generated from the very structs the
fold decodes with, so the two cannot drift). Unknown types keep any object payload (forward
compatibility). `$defs` also holds `claim`, `decision` and `question`: the JSON row of a
ledger record as `self state list --json` prints it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from service.core.events.events import (
    EXPOSURES,
    LEDGER_STATES,
    LEGACY_PREFIXES,
    PAYLOADS,
    SLUG_PATTERN,
    STATUSES,
    SUPERSEDE_REASONS,
    Legacy,
    Origin,
    Outcome,
)

DRAFT = "https://json-schema.org/draft/2020-12/schema"
ULID = "^[0-9a-hjkmnp-tv-z]{26}$"
TIMESTAMP = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$"
REF = "#/$defs/{name}"


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": REF.format(name=name)}


def _components() -> dict[str, Any]:
    structs: list[type[msgspec.Struct]] = sorted(
        {*PAYLOADS.values(), Legacy, Origin, Outcome}, key=lambda t: t.__name__
    )
    _, defs = msgspec.json.schema_components(structs, ref_template=REF)
    return defs


def envelope() -> dict[str, Any]:
    """The event envelope, with the payload schema chosen by `type`."""
    by_type = [
        {
            "if": {"properties": {"type": {"const": kind}}},
            "then": {"properties": {"payload": _ref(struct.__name__)}},
        }
        for kind, struct in sorted(PAYLOADS.items())
    ]
    legacy = "^(" + "|".join(p.replace(".", r"\.") for p in LEGACY_PREFIXES) + ")"
    known = sorted(PAYLOADS)
    by_type.append(
        {
            "if": {"properties": {"type": {"pattern": legacy, "not": {"enum": known}}}},
            "then": {"properties": {"payload": _ref("Legacy")}},
        }
    )
    return {
        "title": "Event",
        "description": "One line of a log: an event in the Superself-compatible envelope.",
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": ULID, "description": "ULID from a hybrid logical clock"},
            "ts": {"type": "string", "pattern": TIMESTAMP},
            "type": {"type": "string", "minLength": 1},
            "origin": _ref("Origin"),
            "project": {"type": "string"},
            "payload": {"type": "object"},
            "refs": {"type": ["object", "null"]},
        },
        "required": ["id", "ts", "type", "origin", "project", "payload"],
        "allOf": by_type,
    }


def _strings() -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}}


def _nullable(kind: str, **more: Any) -> dict[str, Any]:
    return {"anyOf": [{"type": kind, **more}, {"type": "null"}]}


def record(kind: str) -> dict[str, Any]:
    """A ledger record's row (`state list --json`): the entity keys, recorded and derived ones."""
    states = LEDGER_STATES[kind]
    mark = {
        "type": "object",
        "properties": {k: {"type": "string"} for k in ("ground", "head", "reason", "as_of")},
        "required": ["ground", "head", "reason", "as_of"],
    }
    lost = {
        "type": "object",
        "properties": {
            "ground": {"type": "string"},
            "reason": {"type": "string"},
            "head": _nullable("string"),
        },
        "required": ["ground", "reason"],
    }
    properties: dict[str, Any] = {
        "id": {"type": "string"},
        "short": {"type": "string"},
        "project": {"type": "string"},
        "labels": {**_strings(), "contains": {"const": kind}},
        "text": {"type": "string"},
        "why": _nullable("string"),
        "status": {"enum": list(STATUSES)},
        "exposure": {"enum": list(EXPOSURES)},
        "priority": _nullable("integer"),
        "scope": {"type": "string", "pattern": SLUG_PATTERN},  # or a project's slug
        "links": {"type": "array", "items": _ref("Link")},
        "superseded_by": _nullable("string"),
        "supersedes": _strings(),
        "created": {"type": "string"},
        "updated": {"type": "string"},
        "kind": {"const": kind},
        "state": {"enum": list(states)},
        "current": {"type": "boolean"},
        "support": {"enum": ["clean", "flagged", "unsupported"]},
        "review_owed": {"type": "array", "items": mark},
        "lost": {"type": "array", "items": lost},
        "blocked": {"type": "boolean"},
        "blocked_by": _strings(),
        "applicable": {"type": "boolean"} if kind == "decision" else {"type": "null"},
        "resolved": {"type": "boolean"} if kind == "question" else {"type": "null"},
        "resolved_by": _strings(),
        "choice": _nullable("string"),
        "alternatives": _strings(),
        "decided_by": _nullable("string"),
        "supports": {"type": "array", "items": {**_strings(), "minItems": 1}},
        "depends_on": _strings(),
        "answers": _strings(),
        "supersede_reason": {"anyOf": [{"enum": list(SUPERSEDE_REASONS)}, {"type": "null"}]},
        "applies_to": _strings(),
        "rationale": _nullable("string"),
        "evidence": {"type": "array", "items": {"anyOf": [{"type": "string"}, _ref("Evidence")]}},
        "revisit": _nullable("string"),
        "cost_if_wrong": _nullable("string"),
        "pinned": {"type": "boolean"},
        "alias": _nullable("string"),
        "source": _nullable("string"),
        "options": {"type": "array", "items": _ref("Outcome")},
        "moot": {"type": ["boolean", "null"]},
    }
    return {
        "title": kind,
        "description": f"A {kind} as `self state list --json` prints it.",
        "type": "object",
        "properties": properties,
        "required": sorted(properties),
    }


def document() -> dict[str, Any]:
    """The whole schema: the root validates an event; `$defs` names every part."""
    defs = _components()
    defs["Event"] = envelope()
    for kind in ("claim", "decision", "question"):
        defs[kind] = record(kind)
    return {
        "$schema": DRAFT,
        "title": "selfhub events and ledger records",
        "$ref": "#/$defs/Event",
        "$defs": dict(sorted(defs.items())),
    }
