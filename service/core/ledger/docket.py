"""A Docket schema-2 ledger read the way Docket's own reader reads it.

Docket (the tool selfhub replaces) keeps one JSONL file per ledger. Its lines are records
(`c1`, `d1`, `q1`: claims, decisions, questions; each kind's numbers rise through the file —
older Docket versions shared one sequence across kinds, which satisfies that too),
correction lines (`d2.1`: new values for some wording and metadata fields of an earlier
record) and review lines (`d2.r1`: the grounds of a record acknowledged, each pinned to the
head of its supersession chain). The reader here checks what Docket's reader checks — ids,
kinds, states, relations to earlier lines only — and applies corrections in line order.
What only Docket's *writer* refuses (a question mark in a decision, an alternative equal to
the choice) is read as written: the import counts it, the ledger keeps it.

Each line is kept as written too (`Record.written`, `later`): the export writes a record's
lines back byte for byte where nothing changed here (`service/core/interop/docket_out.py`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from service.core.errors import Invalid
from service.core.events.events import LEDGER_KINDS, LEDGER_STATES, SUPERSEDE_REASONS, DocketLine, Evidence

SCHEMA = 2
# Docket's kinds, states and supersede reasons are the ledger's (`service.core.events.events`).
PREFIX = {"claim": "c", "decision": "d", "question": "q"}
# Decision states other tools wrote; Docket's reader knows only adopted and revoked.
DECISION_SYNONYMS = {
    "accepted": "adopted",
    "proposed": "adopted",
    "rejected": "revoked",
    "abandoned": "revoked",
}
RELATIONS = ("depends_on", "answers", "supersedes")
RECORD_ID = re.compile(r"([cdq])([1-9][0-9]*)")
CORRECTION_ID = re.compile(r"([cdq][1-9][0-9]*)\.([1-9][0-9]*)")
REVIEW_ID = re.compile(r"([cdq][1-9][0-9]*)\.r([1-9][0-9]*)")
CORRECTABLE = frozenset(
    {"text", "rationale", "scope", "cost_if_wrong", "evidence", "revisit", "pinned", "supersede_reason"}
)
DECISION_ONLY = frozenset({"choice", "alternatives", "decided_by"})
PROVENANCE = ("ts", "author", "session", "branch")
KNOWN_FIELDS = frozenset(
    {"schema", "kind", "id", "text", "state", "scope", "rationale", "supports", "evidence", "revisit"}
    | {"cost_if_wrong", "pinned", "supersede_reason", "legacy", "migrated_from"}
    | {*RELATIONS, *PROVENANCE, *DECISION_ONLY}
)
CORRECTION_FIELDS = frozenset({"schema", "kind", "id", "corrects", "fields", "reason", *PROVENANCE})
REVIEW_FIELDS = frozenset({"schema", "kind", "id", "reviews", "grounds", "note", *PROVENANCE})


class Review(msgspec.Struct, frozen=True):
    """A review line: each ground (as cited) → the head it was acknowledged at."""

    id: str
    grounds: dict[str, str]
    note: str


class Written(msgspec.Struct, frozen=True):
    """A line of the file as written: its number and its text (no newline)."""

    line: int
    text: str


class Record(msgspec.Struct):
    """One record line, its corrections applied; `fields` holds the line as it reads now,
    `written` the record's line as the file holds it, `later` its correction and review
    lines as the file holds them, in file order."""

    line: int
    fields: dict[str, Any]
    corrections: list[str] = msgspec.field(default_factory=list)
    reviews: list[Review] = msgspec.field(default_factory=list)
    written: str = ""
    later: list[Written] = msgspec.field(default_factory=list)

    @property
    def id(self) -> str:
        return str(self.fields["id"])

    @property
    def kind(self) -> str:
        return str(self.fields["kind"])


class Ledger(msgspec.Struct):
    """A whole Docket ledger: its identity (a digest of its first line, which an append-only
    file never changes), its records in line order, and what else the file held."""

    identity: str
    records: list[Record]
    corrections: int = 0
    reviews: int = 0
    ignored: dict[str, int] = msgspec.field(default_factory=dict)  # unknown field → lines

    def retired(self) -> set[str]:
        return {old for r in self.records for old in r.fields["supersedes"]}


def identity(first: Mapping[str, Any]) -> str:
    """A ledger's identity: a digest of its first line (keys in order, so spacing is moot)."""
    encoded = msgspec.json.encode(first, order="sorted")
    return "docket-" + hashlib.sha256(encoded).hexdigest()[:12]


def read(rows: Sequence[tuple[int, Any]]) -> Ledger:
    """Read the lines of a ledger (line number, and the line's text or its parsed JSON) as
    Docket's reader does; a line it would refuse raises Invalid naming the line. A line given
    parsed is kept as Docket's append writes one (compact, keys in their order)."""
    reader = _Reader()
    parsed: list[Any] = []
    for number, given in rows:
        try:
            raw, text = _parsed(given)
            parsed.append(raw)
            reader.line(number, raw, text)
        except Invalid as exc:
            raise Invalid(f"line {number}: {exc}") from exc
    first = parsed[0] if parsed else {}
    return Ledger(
        identity=identity(first if isinstance(first, dict) else {}),
        records=reader.records,
        corrections=reader.corrections,
        reviews=reader.reviews,
        ignored=reader.ignored,
    )


def _parsed(given: Any) -> tuple[Any, str]:
    """A line's JSON and its text as written."""
    if not isinstance(given, str):
        return given, json.dumps(given, ensure_ascii=False, separators=(",", ":"))
    try:
        return json.loads(given), given
    except ValueError as exc:
        raise Invalid(f"not JSON ({exc})") from exc


class _Reader:
    def __init__(self) -> None:
        self.records: list[Record] = []
        self.by_id: dict[str, Record] = {}
        self.highest: dict[str, int] = {}  # id prefix → its highest number so far
        self.retired: set[str] = set()
        self.numbers: dict[str, int] = {}  # correction or review series → last number
        self.corrections = 0
        self.reviews = 0
        self.ignored: dict[str, int] = {}

    def ignore(self, what: str) -> None:
        self.ignored[what] = self.ignored.get(what, 0) + 1

    def line(self, number: int, raw: Any, text: str) -> None:
        if not isinstance(raw, dict):
            raise Invalid("a ledger line is a JSON object")
        schema = raw.get("schema")
        if schema not in (None, SCHEMA) or (schema is None and "kind" not in raw):
            raise Invalid(
                f"schema {schema!r}: not a schema-2 Docket line (run `docket migrate` on the ledger first)"
            )
        kind = raw.get("kind")
        if kind == "correction":
            self.correction(raw).later.append(Written(number, text))
        elif kind == "review":
            self.review(raw).later.append(Written(number, text))
        elif kind in LEDGER_KINDS:
            self.record(number, raw, text)
        elif schema == SCHEMA and isinstance(kind, str):  # a newer Docket's line: Docket skips it too
            self.ignore(f"kind {kind}")
        else:
            raise Invalid(f"kind {kind!r} is not claim, decision or question (nor a correction or review)")

    # --- records ------------------------------------------------------------------------

    def record(self, number: int, raw: dict[str, Any], text: str) -> None:
        record_id, kind = raw.get("id"), str(raw["kind"])
        match = RECORD_ID.fullmatch(record_id) if isinstance(record_id, str) else None
        if match is None or match.group(1) != PREFIX[kind]:
            raise Invalid(f"id {record_id!r}: a {kind} is {PREFIX[kind]}N, N from 1")
        assert isinstance(record_id, str)
        try:
            fields = normalized(kind, raw)
        except Invalid as exc:
            raise Invalid(f"{record_id}: {exc}") from exc
        if record_id in self.by_id:
            raise Invalid(f"{record_id}: the ledger holds this id twice (Docket's reader refuses it too)")
        if int(match.group(2)) <= self.highest.get(match.group(1), 0):
            raise Invalid(
                f"{record_id}: each kind's ids rise through the ledger, and a higher one came before"
            )
        for name, target in _cited(fields):
            self._check_relation(record_id, kind, name, target)
        for unknown in sorted(set(raw) - KNOWN_FIELDS):
            self.ignore(unknown)
        record = Record(number, fields, written=text)
        self.records.append(record)
        self.by_id[record_id] = record
        self.highest[match.group(1)] = int(match.group(2))
        self.retired.update(fields["supersedes"])

    def _check_relation(self, record_id: str, kind: str, name: str, target: str) -> None:
        found = self.by_id.get(target)
        if target == record_id:
            raise Invalid(f"{record_id}: {name} names the record itself")
        if found is None:
            raise Invalid(f"{record_id}: {name} {target} names no record earlier in the ledger")
        wanted = {
            "supports": ("claim", "decision"),
            "depends_on": ("claim", "decision"),
            "answers": ("question",),
        }
        allowed = wanted.get(name, (kind,))
        if found.kind not in allowed:
            raise Invalid(f"{record_id}: {name} {target} is a {found.kind}, not a {' or '.join(allowed)}")
        if name == "supersedes" and target in self.retired:
            raise Invalid(f"{record_id}: supersedes {target}, which a record before it already superseded")

    # --- corrections and reviews ----------------------------------------------------------

    def _series(self, raw: dict[str, Any], pattern: re.Pattern[str], field: str, noun: str) -> Record:
        line_id = raw.get("id")
        match = pattern.fullmatch(line_id) if isinstance(line_id, str) else None
        if match is None:
            raise Invalid(
                f"{noun} id {line_id!r} is not of the form {'ID.N' if noun == 'correction' else 'ID.rN'}"
            )
        target, number = match.group(1), int(match.group(2))
        if raw.get(field) != target:
            raise Invalid(f"{line_id}: its id starts with {target}, but it names {raw.get(field)!r}")
        record = self.by_id.get(target)
        if record is None:
            raise Invalid(f"{line_id}: {target} names no record earlier in the ledger")
        if number <= self.numbers.get(f"{noun} {target}", 0):
            raise Invalid(f"{line_id}: {noun} numbers rise for each record")
        self.numbers[f"{noun} {target}"] = number
        return record

    def correction(self, raw: dict[str, Any]) -> Record:
        record = self._series(raw, CORRECTION_ID, "corrects", "correction")
        line_id = str(raw["id"])
        for unknown in sorted(set(raw) - CORRECTION_FIELDS):
            self.ignore(unknown)
        fields = raw.get("fields")
        if not isinstance(fields, dict) or not fields:
            raise Invalid(f"{line_id}: fields is a non-empty object")
        allowed = CORRECTABLE | (DECISION_ONLY - {"choice"} if record.kind == "decision" else frozenset())
        fixed = sorted(set(fields) - allowed)
        if fixed:
            raise Invalid(
                f"{line_id}: {', '.join(fixed)} cannot be corrected on a {record.kind} (supersede it instead)"
            )
        try:
            record.fields = normalized(record.kind, {**record.fields, **fields})
        except Invalid as exc:
            raise Invalid(f"{line_id}: {exc}") from exc
        record.corrections.append(line_id)
        self.corrections += 1
        return record

    def review(self, raw: dict[str, Any]) -> Record:
        record = self._series(raw, REVIEW_ID, "reviews", "review")
        line_id = str(raw["id"])
        for unknown in sorted(set(raw) - REVIEW_FIELDS):
            self.ignore(unknown)
        grounds = raw.get("grounds")
        if (
            not isinstance(grounds, dict)
            or not grounds
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in grounds.items())
        ):
            raise Invalid(f"{line_id}: grounds is a non-empty object of ground id → head id")
        if record.kind not in ("claim", "decision"):
            raise Invalid(
                f"{line_id}: only a claim or decision is reviewed, and {record.id} is a {record.kind}"
            )
        missing = [ref for pair in grounds.items() for ref in pair if ref not in self.by_id]
        if missing:
            raise Invalid(f"{line_id}: grounds name {missing[0]}, no record earlier in the ledger")
        note = raw.get("note")
        record.reviews.append(Review(line_id, dict(grounds), note if isinstance(note, str) else ""))
        self.reviews += 1
        return record


def _cited(fields: Mapping[str, Any]) -> list[tuple[str, str]]:
    cited = [("supports", m) for group in fields["supports"] for m in group]
    return cited + [(name, target) for name in RELATIONS for target in fields[name]]


# --- one record's fields -----------------------------------------------------------------


def _text(raw: Mapping[str, Any], name: str) -> str:
    value = raw.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Invalid(f"{name} is not a string")
    return value


def _strings(raw: Mapping[str, Any], name: str) -> list[str]:
    """A list of non-empty strings, as written (a lone string is a list of one)."""
    value = raw.get(name)
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise Invalid(f"{name} is not a list of non-empty strings")
    return list(value)


def _ids(raw: Mapping[str, Any], name: str) -> list[str]:
    return list(dict.fromkeys(_strings(raw, name)))


def _supports(raw: Mapping[str, Any]) -> list[list[str]]:
    value = raw.get("supports")
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid("supports is not a list of id lists")
    groups: list[list[str]] = []
    for group in value:
        members = _ids({"supports": group}, "supports")
        if not members:
            raise Invalid("supports holds an empty set")
        groups.append(members)
    return groups


def _evidence(raw: Mapping[str, Any]) -> list[Evidence]:
    value = raw.get("evidence")
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid("evidence is not a list")
    found: list[Evidence] = []
    for item in value:
        if isinstance(item, Evidence):  # read already (a correction re-reads the record)
            found.append(item)
            continue
        if isinstance(item, str) and item.strip():  # an early shape: the reference alone
            found.append(Evidence(item))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("ref"), str) or not item["ref"].strip():
            raise Invalid("each evidence object needs a non-empty ref")
        extra = sorted(set(item) - {"ref", "checked_at", "commit"})
        if extra:
            raise Invalid(f"evidence holds only ref, checked_at and commit, not {', '.join(extra)}")
        for name in ("checked_at", "commit"):
            if name in item and not isinstance(item[name], str):
                raise Invalid(f"evidence {name} is not a string")
        found.append(Evidence(item["ref"], item.get("checked_at"), item.get("commit")))
    return found


def normalized(kind: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    """A record's fields, checked as Docket's reader checks them, missing ones at Docket's
    defaults (evidence as `Evidence`, relations as id lists)."""
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        raise Invalid("the text is empty")
    state = raw.get("state")
    if state is None:
        state = LEDGER_STATES[kind][0]
    elif kind == "decision" and isinstance(state, str):
        state = DECISION_SYNONYMS.get(state, state)
    if state not in LEDGER_STATES[kind]:
        raise Invalid(f"{kind} state {state!r} is not one of {', '.join(LEDGER_STATES[kind])}")
    pinned = raw.get("pinned", False)
    if not isinstance(pinned, bool):
        raise Invalid("pinned is not true or false")
    fields: dict[str, Any] = {
        "id": raw.get("id"),
        "kind": kind,
        "text": text,
        "state": state,
        "scope": _strings(raw, "scope"),
        "supports": _supports(raw),
        **{name: _ids(raw, name) for name in RELATIONS},
        "evidence": _evidence(raw),
        "pinned": pinned,
        **{name: _text(raw, name) for name in ("rationale", "revisit", "cost_if_wrong", *PROVENANCE)},
    }
    reason = raw.get("supersede_reason")
    if reason is not None:
        if reason not in SUPERSEDE_REASONS:
            raise Invalid(f"supersede_reason {reason!r} is not one of {', '.join(SUPERSEDE_REASONS)}")
        if not fields["supersedes"]:
            raise Invalid("supersede_reason says how a record supersedes another, and it supersedes none")
        fields["supersede_reason"] = reason
    if kind == "decision":
        fields["choice"] = _text(raw, "choice")
        fields["alternatives"] = _strings(raw, "alternatives")
        fields["decided_by"] = _text(raw, "decided_by")
    elif any(raw.get(name) for name in DECISION_ONLY):
        raise Invalid(f"choice, alternatives and decided_by belong to decisions; a {kind} has none")
    if kind == "question" and fields["answers"]:
        raise Invalid("a question answers no other question")
    if kind != "decision" and fields["depends_on"]:
        raise Invalid(f"only decisions have depends_on; a {kind} has none")
    origin = raw.get("migrated_from")
    if origin is not None:
        if not isinstance(origin, str) or not re.fullmatch(r"[cdq](0|[1-9][0-9]*)", origin):
            raise Invalid("migrated_from is not a record id such as d12")
        fields["migrated_from"] = origin
    legacy = raw.get("legacy")
    if isinstance(legacy, dict) and isinstance(legacy.get("source_id"), str):
        fields["legacy"] = legacy["source_id"]  # a migrated record: its schema-1 id
    elif isinstance(legacy, str):
        fields["legacy"] = legacy
    return fields


# --- a line as written ---------------------------------------------------------------------

SPACED = (", ", ": ")  # `docket migrate` writes these; Docket's append writes "," and ":"
COMPACT = (",", ":")


def kept(number: int, text: str) -> DocketLine:
    """A line of the file kept so it can be written back as it was."""
    value = json.loads(text)
    return DocketLine(number, value, key_walk(value), spaced=_dumps(value, SPACED) == text)


def key_walk(value: Any) -> tuple[str, ...]:
    """Every object's keys in their order, the objects taken depth first (an object's keys,
    then each of its values in turn)."""
    walk: list[str] = []

    def visit(item: Any) -> None:
        if isinstance(item, dict):
            walk.extend(item)
            for inner in item.values():
                visit(inner)
        elif isinstance(item, list):
            for inner in item:
                visit(inner)

    visit(value)
    return tuple(walk)


def written(value: dict[str, Any], line: DocketLine) -> str:
    """`value` — the kept line, or one made from it — in the key order and separators the
    kept line was written in; a key it did not hold goes after those it did."""
    orders: dict[tuple[str | int, ...], list[str]] = {}
    keys = iter(line.keys)

    def learn(item: Any, path: tuple[str | int, ...]) -> None:
        if isinstance(item, dict):
            order = [next(keys, "") for _ in item]
            orders[path] = order
            for key in order:
                learn(item.get(key), (*path, key))
        elif isinstance(item, list):
            for n, inner in enumerate(item):
                learn(inner, (*path, n))

    def arranged(item: Any, path: tuple[str | int, ...]) -> Any:
        if isinstance(item, dict):
            rank = {key: n for n, key in enumerate(orders.get(path, []))}
            ordered = sorted(item, key=lambda key: rank.get(key, len(rank)))
            return {key: arranged(item[key], (*path, key)) for key in ordered}
        if isinstance(item, list):
            return [arranged(inner, (*path, n)) for n, inner in enumerate(item)]
        return item

    learn(line.line, ())
    return _dumps(arranged(value, ()), SPACED if line.spaced else COMPACT)


def _dumps(value: Any, separators: tuple[str, str]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=separators)
