"""Every event the test suite writes validates against the exported JSON Schema.

`tests/conftest.py` walks every store the tests left under pytest's base temporary folder
when the session ends (the e2e tests' `self` processes write there too), and the few tests
that keep a store in a `tempfile` folder check it before the folder goes (`checked_tempdir`).
Each line of each log segment is read as the product reads it: a line whose envelope the
decoder rejects is not an event (a test wrote it broken on purpose; reads quarantine it)
and is counted as skipped. Every other line must validate exactly when its payload decodes
as its type: a typed event must be valid, and an event whose payload the fold cannot read
must be invalid too, so the schema and the decoder cannot drift apart.

The schema gives each event type's payload as an `if` on the type and a `then`; an event whose
`type` is a string is checked against the schema with just its own type's `then` (every other
`if` is false for it), which gives the same errors in a third of the time. Any other event is
checked against the whole schema.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import msgspec

from service.core.events.events import decode_unchecked, payload_of
from service.core.events.schema import document

SEGMENT = re.compile(r"^[0-9]{6}\.jsonl$")
SCHEMA = document()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def _type_named(part: dict[str, Any]) -> str | None:
    """The event type an `allOf` part of the envelope applies to (`if` type is X, `then`
    …), else None: a part of any other shape applies to every event."""
    cond = part.get("if")
    if set(part) != {"if", "then"} or not isinstance(cond, dict) or set(cond) != {"properties"}:
        return None
    test = cond["properties"]
    if set(test) != {"type"} or not isinstance(test["type"], dict) or set(test["type"]) != {"const"}:
        return None
    named = test["type"]["const"]
    return named if isinstance(named, str) else None


def _by_type() -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """The envelope's `allOf` parts every event meets, and each type's `then` parts."""
    shared: list[dict[str, Any]] = []
    thens: dict[str, list[dict[str, Any]]] = {}
    for part in SCHEMA["$defs"]["Event"].get("allOf", []):
        named = _type_named(part)
        if named is None:
            shared.append(part)
        else:
            thens.setdefault(named, []).append(part["then"])
    return shared, thens


SHARED, THENS = _by_type()
TYPED: dict[str, jsonschema.protocols.Validator] = {}


def validator_for(instance: object) -> jsonschema.protocols.Validator:
    """The schema as it applies to `instance`: its own type's parts only, when it names one."""
    named = instance.get("type") if isinstance(instance, dict) else None
    if not isinstance(named, str):
        return VALIDATOR
    if named not in TYPED:
        schema = copy.deepcopy(SCHEMA)
        parts = SHARED + THENS.get(named, [])
        if parts:
            schema["$defs"]["Event"]["allOf"] = parts
        else:
            schema["$defs"]["Event"].pop("allOf", None)
        TYPED[named] = jsonschema.Draft202012Validator(schema)
    return TYPED[named]


VERDICTS: dict[bytes, str | None] = {}  # a line's digest → what `problem` said of it


@dataclass
class Tally:
    """What a walk validated: events, lines skipped as not events, files, and failures."""

    events: int = 0
    skipped: int = 0
    files: int = 0
    failures: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.events += other.events
        self.skipped += other.skipped
        self.files += other.files
        self.failures += other.failures


def segments(root: Path) -> Iterator[Path]:
    """Every log segment under `root` (`workspace/log/*.jsonl`, `projects/*/log/*.jsonl`)."""
    for path in sorted(root.rglob("log/*.jsonl")):
        if SEGMENT.match(path.name) and path.is_file() and ".local" not in path.parts:
            yield path


NOT_AN_EVENT = "not an event"


def problem(line: bytes) -> str | None:
    """None when the line is an event that validates as the decoder reads it; NOT_AN_EVENT when
    the decoder rejects its envelope; else what is wrong (the schema's errors, or a schema that
    accepts a payload the fold cannot read)."""
    try:
        event = decode_unchecked(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return NOT_AN_EVENT
    try:
        payload_of(event)
        typed = True
    except (msgspec.DecodeError, msgspec.ValidationError):
        typed = False
    instance = json.loads(line)
    errors = [
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
        for e in validator_for(instance).iter_errors(instance)
    ]
    if typed:
        return "; ".join(errors) if errors else None
    return None if errors else f"the schema accepts a {event.type} payload the fold cannot read"


def check_file(path: Path, tally: Tally) -> None:
    tally.files += 1
    for number, line in enumerate(path.read_bytes().split(b"\n"), 1):
        if not line.strip():
            continue
        key = hashlib.blake2b(line, digest_size=16).digest()
        if key not in VERDICTS:  # stores copied from one another repeat most lines
            VERDICTS[key] = problem(line)
        verdict = VERDICTS[key]
        if verdict == NOT_AN_EVENT:
            tally.skipped += 1
            continue
        tally.events += 1
        if verdict is not None:
            tally.failures.append(f"{path}:{number}: {verdict}")


def check_tree(root: Path, tally: Tally | None = None) -> Tally:
    """Validate every log line under `root`; returns (or adds to) the tally."""
    tally = tally if tally is not None else Tally()
    for path in segments(root):
        check_file(path, tally)
    return tally


TEMPDIRS = Tally()  # what `checked_tempdir` folders held, for the session's summary


@contextmanager
def checked_tempdir() -> Iterator[Path]:
    """A `tempfile` folder whose logs are validated before it is removed (for property tests,
    which cannot take pytest's per-test folders)."""
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)
        found = check_tree(Path(folder))
        TEMPDIRS.add(Tally(found.events, found.skipped, found.files))  # failures fail this test
        assert not found.failures, "events that do not validate:\n" + "\n".join(found.failures)
