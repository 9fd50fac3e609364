"""What Docket's own reader accepts: its read-time rules, rebuilt as a checker for tests.

Docket (NovusEdge/docket) validates every line of a ledger when it reads one (`read` in
`docket/ledger.py`, with `corrections.py` and `reviews.py` for those lines) and refuses the
whole file at the first line that fails. This module states those rules again, from reading
that source, so a test can hold a file `self export docket` wrote to them without running
Docket. Nothing here is Docket's code; only the rules are.

The stored versions of `ledger.py` differ, and each is a `Version` below:

- `168d1f2`: records only (claim, decision, question), ids in one sequence shared by the
  kinds ("global sequence must increase monotonically"), no field it does not list
  (`supersede_reason` included), `legacy` only in the shape `docket migrate` writes;
- `049e5aa`: the same numbering, plus correction lines (`d4.1`), review lines (`d4.r1`) and
  `supersede_reason`;
- `per-kind`: a later version numbering each kind on its own ("per-kind sequence must
  increase"), `migrated_from`, and lines or fields of a newer Docket skipped rather than
  refused; a torn last line (no newline, not JSON) skipped.

Writers never matter here: what only Docket's writer refuses (a decision phrased as a
question, an alternative equal to the choice) is no part of reading.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

KINDS = ("claim", "decision", "question")
PREFIX = {"claim": "c", "decision": "d", "question": "q"}
STATES = {
    "claim": ("unassessed", "accepted", "disputed", "rejected"),
    "decision": ("adopted", "revoked"),
    "question": ("open", "resolved"),  # resolved is known, then refused: resolution is derived
}
RECORD_ID = re.compile(r"([cdq])(0|[1-9][0-9]*)")
CORRECTION_ID = re.compile(r"([cdq](?:0|[1-9][0-9]*))\.([1-9][0-9]*)")
REVIEW_ID = re.compile(r"([cdq](?:0|[1-9][0-9]*))\.r([1-9][0-9]*)")
REASONS = ("restate", "revise", "reverse")
TEXT_FIELDS = ("ts", "author", "session", "branch", "rationale", "revisit", "cost_if_wrong")
RELATIONS = ("depends_on", "answers", "supersedes")
COMMON = frozenset(
    {"schema", "kind", "id", "text", "state", "ts", "author", "session", "branch", "scope", "rationale"}
    | {"supports", "depends_on", "answers", "supersedes", "evidence", "revisit", "cost_if_wrong", "pinned"}
)
DECISION_ONLY = frozenset({"choice", "alternatives", "decided_by"})
CORRECTION_FIELDS = frozenset(
    {"schema", "kind", "id", "corrects", "fields", "reason", "ts", "author", "session", "branch"}
)
REVIEW_FIELDS = frozenset(
    {"schema", "kind", "id", "reviews", "grounds", "note", "ts", "author", "session", "branch"}
)
CORRECTABLE = frozenset(
    {"text", "rationale", "scope", "cost_if_wrong", "evidence", "revisit", "pinned", "supersede_reason"}
)
DECISION_WORDING = frozenset({"alternatives", "decided_by"})  # a decision's correctable own fields
LEGACY_KEYS = frozenset({"source_id", "raw", "relation_map"})


@dataclass(frozen=True)
class Version:
    """One stored version of Docket's reader, by the rules it reads with."""

    name: str
    shared: bool  # ids rise across kinds (one sequence), else within each kind
    lines: bool  # correction and review lines, and supersede_reason, are known
    migrated_from: bool  # the field is known
    lenient: bool  # a newer Docket's kind or field is skipped, a torn last line too

    @property
    def record_fields(self) -> frozenset[str]:
        extra = {"legacy"} | ({"supersede_reason"} if self.lines else set())
        return COMMON | DECISION_ONLY | extra | ({"migrated_from"} if self.migrated_from else set())


V168D1F2 = Version("168d1f2", shared=True, lines=False, migrated_from=False, lenient=False)
V049E5AA = Version("049e5aa", shared=True, lines=True, migrated_from=False, lenient=False)
PER_KIND = Version("per-kind", shared=False, lines=True, migrated_from=True, lenient=True)
VERSIONS = (V168D1F2, V049E5AA, PER_KIND)


class Refused(Exception):
    """The line Docket's reader stops at, and why."""

    def __init__(self, line: int, why: str) -> None:
        super().__init__(f"line {line}: {why}")
        self.line = line
        self.why = why


@dataclass
class _Seen:
    """What the reader knows of the lines before the one it reads."""

    kinds: dict[str, str] = field(default_factory=dict)  # record id → kind
    highest: dict[str, int] = field(default_factory=dict)  # sequence ("all" or a prefix) → number
    retired: set[str] = field(default_factory=set)
    series: dict[str, int] = field(default_factory=dict)  # "correction c4" / "review d4" → number
    records: dict[str, dict[str, Any]] = field(default_factory=dict)


def read(text: str, version: Version) -> list[dict[str, Any]]:
    """The lines of a ledger file as `version` of Docket's reader reads them; raises
    `Refused` at the first line it refuses."""
    if version.lenient and text and not text.endswith("\n"):
        start = text.rfind("\n") + 1
        try:
            json.loads(text[start:])
        except json.JSONDecodeError:
            text = text[:start]  # an append that died midway
    seen = _Seen()
    out: list[dict[str, Any]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise Refused(number, f"invalid JSON: {exc.msg}") from exc
        if version.lenient:
            value = _known_part(value, version)
            if value is None:
                continue
        try:
            _line(value, version, seen)
        except _Bad as exc:
            raise Refused(number, str(exc)) from exc
        out.append(value)
    return out


def check(lines: list[dict[str, Any]], version: Version) -> list[dict[str, Any]]:
    """`read` over lines as `self export docket` writes them to a file."""
    return read(
        "".join(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n" for line in lines), version
    )


class _Bad(Exception):
    pass


def _known_part(value: Any, version: Version) -> Any:
    """A lenient reader's view of a line: None for a newer Docket's kind, the line without
    the fields it does not know otherwise (a line too broken to tell is left to refuse)."""
    if (
        not isinstance(value, dict)
        or value.get("schema") in (None, 1)
        or not isinstance(value.get("kind"), str)
    ):
        return value
    known = {
        **dict.fromkeys(KINDS, version.record_fields),
        "correction": CORRECTION_FIELDS,
        "review": REVIEW_FIELDS,
    }.get(value["kind"])
    if known is None:
        return None
    return {k: v for k, v in value.items() if not isinstance(k, str) or k in known}


def _line(value: Any, version: Version, seen: _Seen) -> None:
    if not isinstance(value, dict):
        raise _Bad("a line is a JSON object")
    if version.lines and value.get("kind") == "correction":
        _correction(value, version, seen)
    elif version.lines and value.get("kind") == "review":
        _review(value, seen)
    else:
        _record(value, version, seen, numbered=True)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) and item for item in value)


def _schema(value: dict[str, Any]) -> None:
    if type(value.get("schema")) is not int or value["schema"] != 2:
        raise _Bad(f"schema 2 expected, not {value.get('schema')!r}")


def _record(value: dict[str, Any], version: Version, seen: _Seen, *, numbered: bool) -> None:
    """A record line's own shape, then (`numbered`) its place among the lines before it."""
    if value.get("schema") in (None, 1):
        raise _Bad("a schema-1 line: Docket wants `docket migrate` first")
    unknown = sorted(set(value) - version.record_fields)
    if unknown:
        raise _Bad(f"fields Docket does not know: {', '.join(unknown)}")
    _schema(value)
    kind = value.get("kind")
    if kind not in KINDS:
        raise _Bad(f"kind {kind!r}")
    ident = value.get("id")
    match = RECORD_ID.fullmatch(ident) if isinstance(ident, str) else None
    if match is None:
        raise _Bad(f"id {ident!r} is not cN, dN or qN")
    assert isinstance(ident, str)
    number = int(match.group(2))
    if match.group(1) != PREFIX[kind] or number < 1:
        raise _Bad(f"{ident}: the wrong prefix for a {kind}, or number 0")
    if not isinstance(value.get("text"), str) or not value["text"].strip():
        raise _Bad(f"{ident}: empty text")
    state = value.get("state")
    if state not in STATES[kind]:
        raise _Bad(f"{ident}: state {state!r}")
    for name in TEXT_FIELDS:
        if not isinstance(value.get(name), str):
            raise _Bad(f"{ident}: {name} is not a string (every record carries it)")
    if not isinstance(value.get("pinned"), bool):
        raise _Bad(f"{ident}: pinned is not a boolean")
    if not _strings(value.get("scope")):
        raise _Bad(f"{ident}: scope")
    for name in RELATIONS:
        if not _strings(value.get(name)):
            raise _Bad(f"{ident}: {name} is not a list of ids")
    supports = value.get("supports")
    if not isinstance(supports, list) or not all(_strings(group) and group for group in supports):
        raise _Bad(f"{ident}: supports is not a list of non-empty id lists")
    _evidence(ident, value.get("evidence"))
    if kind == "decision":
        if not isinstance(value.get("choice"), str) or not value["choice"].strip():
            raise _Bad(f"{ident}: a decision's choice is a non-empty string")
        if not _strings(value.get("alternatives")):
            raise _Bad(f"{ident}: alternatives")
        if not isinstance(value.get("decided_by", ""), str):
            raise _Bad(f"{ident}: decided_by")
    elif DECISION_ONLY & set(value):
        raise _Bad(f"{ident}: choice, alternatives and decided_by belong to decisions")
    _audit(ident, value, version)
    if kind == "question" and state != "open":
        raise _Bad(f"{ident}: a question is recorded open")
    if kind == "question" and value["answers"]:
        raise _Bad(f"{ident}: a question answers nothing")
    if kind != "decision" and value["depends_on"]:
        raise _Bad(f"{ident}: only a decision depends on anything")
    if "supersede_reason" in value:
        if value["supersede_reason"] not in REASONS:
            raise _Bad(f"{ident}: supersede_reason {value['supersede_reason']!r}")
        if not value["supersedes"]:
            raise _Bad(f"{ident}: supersede_reason without supersedes")
    if numbered:
        _placed(ident, kind, number, value, version, seen)


def _evidence(ident: str, evidence: Any) -> None:
    if not isinstance(evidence, list):
        raise _Bad(f"{ident}: evidence is not a list")
    for item in evidence:
        if not isinstance(item, dict) or not isinstance(item.get("ref"), str) or not item["ref"].strip():
            raise _Bad(f"{ident}: an evidence item is an object with a non-empty ref")
        if any(name in item and not isinstance(item[name], str) for name in ("checked_at", "commit")):
            raise _Bad(f"{ident}: evidence checked_at and commit are strings")
        if set(item) - {"ref", "checked_at", "commit"}:
            raise _Bad(f"{ident}: evidence holds ref, checked_at and commit only")


def _audit(ident: str, value: dict[str, Any], version: Version) -> None:
    """`legacy` (the migration's trail) and `migrated_from`."""
    if "legacy" in value:
        legacy = value["legacy"]
        if not isinstance(legacy, dict):
            raise _Bad(f"{ident}: legacy is an object")
        if not version.lenient:  # the earlier versions check the trail's shape on every read
            if set(legacy) != LEGACY_KEYS:
                raise _Bad(f"{ident}: legacy holds source_id, raw and relation_map")
            source = legacy["source_id"]
            if (
                not isinstance(source, str)
                or not re.fullmatch(r"d[1-9][0-9]*", source)
                or not isinstance(legacy["raw"], dict)
                or legacy["raw"].get("id") != source
                or not isinstance(legacy["relation_map"], dict)
            ):
                raise _Bad(f"{ident}: legacy names its schema-1 record and carries it")
    if "migrated_from" in value:
        origin = value["migrated_from"]
        if not isinstance(origin, str) or not RECORD_ID.fullmatch(origin):
            raise _Bad(f"{ident}: migrated_from is a record id")


def _placed(ident: str, kind: str, number: int, value: dict[str, Any], version: Version, seen: _Seen) -> None:
    """The checks against the lines before: a new id, rising in its sequence, relations to
    earlier records of the kinds each relation allows, one successor per record."""
    if ident in seen.kinds:
        raise _Bad(f"{ident}: an id twice")
    sequence = "all" if version.shared else ident[0]
    if number <= seen.highest.get(sequence, 0):
        rule = "one sequence across kinds" if version.shared else "each kind's sequence"
        raise _Bad(f"{ident}: ids must rise ({rule}); a higher one came before")
    cited = [("supports", ref) for group in value["supports"] for ref in group]
    cited += [(name, ref) for name in RELATIONS for ref in value[name]]
    allowed = {
        "supports": ("claim", "decision"),
        "depends_on": ("claim", "decision"),
        "answers": ("question",),
    }
    for name, ref in cited:
        if ref == ident:
            raise _Bad(f"{ident}: {name} names itself")
        if ref not in seen.kinds:
            raise _Bad(f"{ident}: {name} {ref} is unknown or later")
        if seen.kinds[ref] not in allowed.get(name, (kind,)):
            raise _Bad(f"{ident}: {name} {ref} is a {seen.kinds[ref]}")
        if name == "supersedes" and ref in seen.retired:
            raise _Bad(f"{ident}: {ref} is superseded already")
    seen.kinds[ident] = kind
    seen.highest[sequence] = max(seen.highest.get(sequence, 0), number)
    seen.retired.update(value["supersedes"])
    seen.records[ident] = value


def _series(value: dict[str, Any], pattern: re.Pattern[str], names: str, noun: str, seen: _Seen) -> str:
    ident = value.get("id")
    match = pattern.fullmatch(ident) if isinstance(ident, str) else None
    if match is None:
        raise _Bad(f"{noun} id {ident!r}")
    if value.get(names) != match.group(1):
        raise _Bad(f"{ident}: {names} is not the id it starts with")
    return match.group(1)


def _correction(value: dict[str, Any], version: Version, seen: _Seen) -> None:
    target = _series(value, CORRECTION_ID, "corrects", "correction", seen)
    ident = str(value["id"])
    if set(value) - CORRECTION_FIELDS:
        raise _Bad(f"{ident}: fields a correction line does not have")
    _schema(value)
    if any(not isinstance(value.get(name), str) for name in ("ts", "author", "session", "branch", "reason")):
        raise _Bad(f"{ident}: ts, author, session, branch and reason are strings")
    fields = value.get("fields")
    if not isinstance(fields, dict) or not fields:
        raise _Bad(f"{ident}: fields is a non-empty object")
    record = seen.records.get(target)
    if record is None:
        raise _Bad(f"{ident}: corrects an unknown or later record")
    fixed = set(fields) - CORRECTABLE - DECISION_WORDING
    if fixed:  # choice, state and relations: Docket supersedes instead
        raise _Bad(f"{ident}: {', '.join(sorted(fixed))} cannot be corrected")
    if record["kind"] != "decision" and DECISION_WORDING & set(fields):
        raise _Bad(f"{ident}: decision fields on a {record['kind']}")
    _next_in_series(f"correction {target}", ident, seen)
    _record({**record, **fields}, version, seen, numbered=False)  # each new value of the right type


def _review(value: dict[str, Any], seen: _Seen) -> None:
    target = _series(value, REVIEW_ID, "reviews", "review", seen)
    ident = str(value["id"])
    if set(value) - REVIEW_FIELDS:
        raise _Bad(f"{ident}: fields a review line does not have")
    _schema(value)
    if any(not isinstance(value.get(name), str) for name in ("ts", "author", "session", "branch", "note")):
        raise _Bad(f"{ident}: ts, author, session, branch and note are strings")
    grounds = value.get("grounds")
    if (
        not isinstance(grounds, dict)
        or not grounds
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in grounds.items())
    ):
        raise _Bad(f"{ident}: grounds maps ground ids to head ids")
    if seen.kinds.get(target) not in ("claim", "decision"):
        raise _Bad(f"{ident}: reviews an unknown or later record, or a question")
    for ref in (ref for pair in grounds.items() for ref in pair):
        if ref not in seen.kinds:
            raise _Bad(f"{ident}: grounds name {ref}, unknown or later")
    _next_in_series(f"review {target}", ident, seen)


def _next_in_series(series: str, ident: str, seen: _Seen) -> None:
    number = int(ident.rsplit(".", 1)[1].lstrip("r"))
    if number <= seen.series.get(series, 0):
        raise _Bad(f"{ident}: numbers rise for each record")
    seen.series[series] = number
