"""A state's ledger as a Docket schema-2 file (`self export docket`).

An imported record is written back from its trail (`LedgerFields.docket`): its own line, its
correction lines and its review lines, each in the place and the bytes its ledger gave it.
What changed here since the import is written over the record's own line — the fields
whose value now differs from what the ledger read (a claim assessed, a decision revoked),
each one then dropped from the correction lines that set it — and a review line keeps only
the grounds this ledger does not owe a review on now for a cause of their own (an assessment
or a new head since the review makes the record owe it again, and Docket reads the line that
way too; a flag the ground inherits is never a review's to lift, here or in Docket). A line
nothing touched keeps its bytes, so `import → export` of a Docket ledger gives the file back.

A record written here gets a line in the shape and key order Docket's writer gives one,
compact, its `ts` the time it was recorded, its author and session those of the event that
made it (`written_by`), and its review marks one review line.

Ids are one sequence shared by the three kinds (`_names`): every stored version of Docket's
reader accepts that numbering. A record keeps its Docket id while that id fits; any other
takes the next free number, and every line naming a record names it by its id in the file.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Set
from typing import Any

import msgspec

from service.core.events import ids
from service.core.events.events import DocketLine, DocketTrail, Event, LedgerFields
from service.core.fold.state import Entity, Fact, State
from service.core.ledger import docket
from service.core.ledger.derived import DEFAULT_REASON, INHERITED, Owed, derive
from service.core.ledger.ledger import aliases

RELATIONS = ("supports", "depends_on", "answers", "supersedes")
PROVENANCE = ("ts", "author", "session", "branch")
RECORD_FIELDS = docket.KNOWN_FIELDS - {"migrated_from"}
OPTIONAL = {"decided_by": ""}  # a field Docket's reader takes as this when a line has none


class DocketExport(msgspec.Struct, frozen=True):
    """A state's ledger as Docket schema-2 lines (each as a JSON object, and as the text
    the file holds), and the records written under another id than the one they were
    imported with (their old Docket id → the id in the file)."""

    lines: list[dict[str, Any]]
    renumbered: list[tuple[str, str]]
    texts: list[str]
    names: dict[str, str]  # each record's id here → its id in the file


class _Values(msgspec.Struct, frozen=True):
    """What a record's line says, by ids here."""

    id: str
    kind: str
    text: str
    why: str | None
    state: str
    supports: tuple[tuple[str, ...], ...]
    depends_on: tuple[str, ...]
    answers: tuple[str, ...]
    supersedes: tuple[str, ...]
    fields: LedgerFields | None


class _Out(msgspec.Struct):
    """One line of the file: where it goes, its object, the text it was read from."""

    key: tuple[str, int]
    line: dict[str, Any]
    kept: DocketLine | None = None


def docket_lines(state: State) -> list[dict[str, Any]]:
    return docket_export(state).lines


class _File:
    """What every line of one export reads: the records in file order, their names and
    places, each imported ledger's place and ids, and who retired whom."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.anchors = _anchors(state)
        self.records = sorted(
            (e for e in state.entities.values() if e.id in state.ledger and e.status != "retracted"),
            key=self.key,
        )
        taken = {e.ledger.alias for e in state.entities.values() if e.ledger is not None and e.ledger.alias}
        self.names = _names(self.records, state.ledger, taken)
        self.rank = {e.id: n for n, e in enumerate(self.records)}
        self.retires: dict[str, list[str]] = {}
        for record_id in sorted(state.ledger):
            successor = state.ledger[record_id].superseded_by
            if successor is not None:
                self.retires.setdefault(successor, []).append(record_id)
        self.sources = {source: aliases(state, source) for source in self.anchors}

    def key(self, e: Entity) -> tuple[str, int]:
        """Where a record's line goes: an imported one at its line in its ledger, the ledger
        placed where its first record was imported; a record written here when it was."""
        fields = e.ledger
        if fields is None or fields.docket is None:
            return e.created, 0
        return self.anchors[fields.source or ""], fields.docket.record.at

    def here(self, e: Entity) -> dict[str, str]:
        """The record's ledger: each Docket id → the record here."""
        return self.sources.get(e.ledger.source or "", {}) if e.ledger is not None else {}


class Writes(msgspec.Struct):
    """Who wrote what here, as the events say (Docket's provenance of a line written here):
    each record's author and session, and each record's last review (its time, author,
    session, note and event id)."""

    records: dict[str, dict[str, str]] = msgspec.field(default_factory=dict)
    reviews: dict[str, dict[str, str]] = msgspec.field(default_factory=dict)


class _Made(msgspec.Struct):
    entity: str = ""
    why: str | None = None


def written_by(events: Iterable[Event]) -> Writes:
    """The author (`origin.by`, the signed author) and session of each record's first event
    and of each record's last review made here (not one an import wrote)."""
    writes = Writes()
    for event in events:
        if event.type in ("entity.confirmed", "entity.proposed", "entity.reviewed"):
            made = msgspec.json.decode(event.payload, type=_Made)
            who = {"author": event.origin.by or "", "session": event.origin.session or ""}
            if event.type != "entity.reviewed":
                writes.records.setdefault(made.entity, who)
            elif "docket" not in (event.refs or {}):
                writes.reviews[made.entity] = who | {
                    "ts": _iso(event.id),
                    "note": made.why or "",
                    "id": event.id,
                }
    return writes


def docket_export(state: State, writes: Writes | None = None) -> DocketExport:
    """The ledger records of `state` as a Docket schema-2 file, in the order they were
    recorded (an imported ledger's lines in its own order). `writes` (`written_by`): who
    wrote each record and review made here, and in which session."""
    writes = writes or Writes()
    file = _File(state)
    records, names = file.records, file.names
    views = derive(state, [e.id for e in records])
    owed = {i: _owed_own(view.review_owed) for i, view in views.items()}
    out: list[_Out] = []
    for e in records:
        trail = e.ledger.docket if e.ledger is not None else None
        if trail is not None:
            out += _written_back(file, e, trail, owed[e.id])
        else:
            line = _line(_now(e, file), names, file.rank, _stamped(e) | writes.records.get(e.id, {}))
            out.append(_Out((e.created, 0), _with_id(line, names[e.id])))
        skip = owed[e.id] | _pinned(file, e)
        out += _native_review(e, state.ledger[e.id], names, skip, writes.reviews.get(e.id, {}))
    out.sort(key=lambda o: o.key)
    renumbered = [
        (alias, names[e.id])
        for e in records
        if e.ledger is not None and (alias := e.ledger.alias) and alias != names[e.id]
    ]
    return DocketExport([o.line for o in out], renumbered, [_text(o) for o in out], names)


def _owed_own(owed: Iterable[Owed]) -> set[tuple[str, str]]:
    """The grounds and heads owed a review for a cause of their own: a review's pin there is
    stale. A ground owed only for a flag it inherits (`blocked`, `flagged`) keeps its pin,
    which Docket reads as selfhub does: the pin lifts the ground's own causes and the
    inherited one still flags it (`support.evaluate` in Docket's source)."""
    return {(o.ground, o.head) for o in owed if o.reason not in INHERITED}


def _anchors(state: State) -> dict[str, str]:
    """Each imported ledger → the id of its first record here."""
    found: dict[str, str] = {}
    for e in state.entities.values():
        if e.ledger is not None and e.ledger.docket is not None:
            source = e.ledger.source or ""
            found[source] = min(found.get(source, e.created), e.created)
    return found


def _names(records: list[Entity], facts: Mapping[str, Fact], taken: Set[str]) -> dict[str, str]:
    """Each record's id in the file: one sequence shared by the three kinds (`c1`, `d2`,
    `q3`), each number above every one before it. That is the numbering every stored version
    of Docket's reader accepts: most refuse any other ("global sequence must increase"), and
    those that number each kind on its own want only each kind's numbers to rise.

    A record keeps the Docket id it was imported with while that id fits (its kind's prefix,
    a number above every id before it), so a ledger numbered that way comes back with its own
    ids. Any other record — written here, or from a ledger numbered per kind — takes the next
    number whose id no imported record holds (`taken`): an id in the file never names another
    record than the one it named in the ledger it came from."""
    names: dict[str, str] = {}
    highest = 0
    for e in records:
        prefix = docket.PREFIX[facts[e.id].kind]
        alias = e.ledger.alias if e.ledger is not None else None
        match = docket.RECORD_ID.fullmatch(alias) if alias else None
        if alias and match and match.group(1) == prefix and int(match.group(2)) > highest:
            highest = int(match.group(2))
            names[e.id] = alias
            continue
        highest += 1
        while f"{prefix}{highest}" in taken:
            highest += 1
        names[e.id] = f"{prefix}{highest}"
    return names


# --- a record's line ----------------------------------------------------------------------


def _now(e: Entity, file: _File) -> _Values:
    """The record's line as the state reads now. It supersedes the records the state says it
    retired (a proposal's supersession waits for its confirmation here, and so in the file)."""
    fact = file.state.ledger[e.id]
    retired = file.retires.get(e.id, [])
    retired = [t for t in e.supersedes if t in retired] + [t for t in retired if t not in e.supersedes]
    return _Values(
        id=e.id,
        kind=fact.kind,
        text=e.text,
        why=e.why,
        state=fact.state,
        supports=fact.supports,
        depends_on=fact.depends_on,
        answers=fact.answers,
        supersedes=tuple(dict.fromkeys(retired)),
        fields=e.ledger,
    )


def _stamped(e: Entity) -> dict[str, str]:
    """A record written here: the time it was recorded (Docket's `ts`, to the second); no
    branch (selfhub does not record one)."""
    return {"ts": _iso(e.created), "author": "", "session": "", "branch": ""}


def _iso(event_id: str) -> str:
    """An event id's time as Docket writes a `ts`."""
    millis = ids.time_ms(event_id)
    return dt.datetime.fromtimestamp(millis / 1000, dt.UTC).isoformat(timespec="seconds")


def _line(
    values: _Values, names: Mapping[str, str], rank: Mapping[str, int], provenance: Mapping[str, str]
) -> dict[str, Any]:
    """A record's line in the key order Docket's writer builds one. It names only records
    before it (`rank`: each record's place in the file): Docket's relations point back, so
    one made here to a later record is not written."""
    fields = values.fields or LedgerFields()
    evidence = [
        {"ref": item} if isinstance(item, str) else msgspec.to_builtins(item)
        for item in fields.evidence
        if (item if isinstance(item, str) else item.ref).strip()  # Docket wants a non-empty ref
    ]
    limit = rank.get(values.id, len(rank))
    cited = _Before(names, rank, limit)
    supports = [[cited[m] for m in group if m in cited] for group in values.supports]
    line: dict[str, Any] = {
        "schema": docket.SCHEMA,
        "kind": values.kind,
        "id": "",
        "text": values.text,
        "state": values.state,
        **{name: provenance.get(name, "") for name in PROVENANCE},
        "scope": list(fields.applies_to),
        "rationale": values.why or "",
        "supports": [group for group in supports if group],
        "depends_on": [cited[t] for t in values.depends_on if t in cited],
        "answers": [cited[t] for t in values.answers if t in cited and values.kind != "question"],
        "supersedes": [cited[t] for t in values.supersedes if t in cited],
        "evidence": evidence,
        "revisit": fields.revisit or "",
        "cost_if_wrong": fields.cost_if_wrong or "",
        "pinned": fields.pinned,
    }
    reason = fields.supersede_reason
    if line["supersedes"] and reason and reason != DEFAULT_REASON:
        # "revise" is what a supersession without a reason means to Docket and to the import,
        # and Docket's 168d1f2 reader refuses the field: written only when it says more
        line["supersede_reason"] = reason
    if values.kind == "decision":
        line["choice"] = fields.choice or values.text  # Docket's reader wants one
        line["alternatives"] = list(fields.alternatives)
        line["decided_by"] = fields.decided_by or ""
    return line


class _Before:
    """The names of the records before a place in the file."""

    def __init__(self, names: Mapping[str, str], rank: Mapping[str, int], limit: int) -> None:
        self.names, self.rank, self.limit = names, rank, limit

    def __contains__(self, record_id: object) -> bool:
        return isinstance(record_id, str) and self.rank.get(record_id, self.limit) < self.limit

    def __getitem__(self, record_id: str) -> str:
        return self.names[record_id]


def _with_id(line: dict[str, Any], name: str) -> dict[str, Any]:
    return {**line, "id": name}


# --- an imported record's lines, written back -----------------------------------------------


def _written_back(file: _File, e: Entity, trail: DocketTrail, owed: Set[tuple[str, str]]) -> list[_Out]:
    """The record's own line, its corrections and its reviews as its ledger wrote them, with
    what reads otherwise here written over them: what changed since the import, and what
    Docket's reader wants in another shape than the line held (a missing field, an evidence
    reference written bare, a decision state another tool named)."""
    names = file.names
    anchor = file.key(e)[0]
    here = file.here(e)
    rename = {alias: names[i] for alias, i in here.items() if i in names}
    record = _shaped(_renamed_record(_known(trail.record.line, RECORD_FIELDS), rename))
    read = dict(record)
    for line in trail.corrections:
        read |= _shaped(line.line["fields"])
    now = _line(_now(e, file), names, file.rank, _provenance(record)) | {"id": record["id"]}
    changed = {k for k, v in now.items() if read.get(k, OPTIONAL.get(k)) != v}
    if read.get("supersede_reason") == DEFAULT_REASON and "supersede_reason" not in now:
        changed.discard("supersede_reason")  # a revision, written out
    elif "supersede_reason" in read and "supersede_reason" not in now:
        changed.add("supersede_reason")
    for name in changed:
        if name in now:
            record[name] = now[name]
        else:
            record.pop(name, None)
    out = [_Out((anchor, trail.record.at), record, trail.record)]
    for line in trail.corrections:
        correction = _correction(_known(line.line, docket.CORRECTION_FIELDS), rename, changed)
        if correction is not None:
            out.append(_Out((anchor, line.at), correction, line))
    for line in trail.reviews:
        review = _review(_known(line.line, docket.REVIEW_FIELDS), rename, here, owed)
        if review is not None:
            out.append(_Out((anchor, line.at), review, line))
    return out


def _known(line: Mapping[str, Any], fields: Set[str]) -> dict[str, Any]:
    """A line without the fields Docket's reader (049e5aa) refuses: those a later Docket
    added (`migrated_from`), those it does not know."""
    return {k: v for k, v in line.items() if k in fields}


def _shaped(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Fields in the shape Docket's reader wants where an earlier Docket wrote another that
    the import reads too: an evidence reference written bare, a scope of one written alone."""
    out = dict(fields)
    evidence = out.get("evidence")
    if isinstance(evidence, list) and any(isinstance(item, str) for item in evidence):
        out["evidence"] = [{"ref": item} if isinstance(item, str) else item for item in evidence]
    if isinstance(out.get("scope"), str):
        out["scope"] = [out["scope"]]
    return out


def _provenance(raw: Mapping[str, Any]) -> dict[str, str]:
    return {name: value if isinstance(value := raw.get(name), str) else "" for name in PROVENANCE}


def _renamed_record(raw: dict[str, Any], rename: Mapping[str, str]) -> dict[str, Any]:
    """A record line with its id and relations named as in the file (a relation to a
    record not written, one retracted here, left out)."""
    out = dict(raw)
    out["id"] = rename.get(raw["id"], raw["id"])
    for name in RELATIONS:
        value = raw.get(name)
        if not isinstance(value, list):
            continue
        if name == "supports":
            groups = [[rename[m] for m in g if m in rename] if isinstance(g, list) else g for g in value]
            out[name] = [g for g in groups if g]
        else:
            out[name] = [rename[t] for t in value if isinstance(t, str) and t in rename]
    return out


def _series(raw: dict[str, Any], field: str, rename: Mapping[str, str]) -> dict[str, Any]:
    """A correction or review line renamed with its record (`d4.1` of `d4` → `d13.1`)."""
    target = raw[field]
    name = rename.get(target, target)
    if name == target:
        return dict(raw)
    return {**raw, "id": name + raw["id"][len(target) :], field: name}


def _correction(raw: dict[str, Any], rename: Mapping[str, str], changed: Set[str]) -> dict[str, Any] | None:
    """A correction line, without the fields changed here since (None: none left)."""
    out = _series(raw, "corrects", rename)
    kept = {k: v for k, v in _shaped(raw["fields"]).items() if k not in changed}
    if not kept:
        return None
    if kept != raw["fields"]:
        out["fields"] = kept
    return out


def _review(
    raw: dict[str, Any], rename: Mapping[str, str], here: Mapping[str, str], owed: Set[tuple[str, str]]
) -> dict[str, Any] | None:
    """A review line with the grounds this ledger still takes as reviewed: a ground it owes
    a review on now for a cause of its own is left out, so Docket owes it too (None: no
    ground left)."""
    out = _series(raw, "reviews", rename)
    grounds = {
        rename[g]: rename[h]
        for g, h in raw["grounds"].items()
        if g in rename and h in rename and (here[g], here[h]) not in owed
    }
    if not grounds:
        return None
    if grounds != raw["grounds"]:
        out["grounds"] = grounds
    return out


def _pinned(file: _File, e: Entity) -> set[tuple[str, str]]:
    """The grounds and heads (ids here) the record's imported review lines pinned."""
    fields = e.ledger
    if fields is None or fields.docket is None:
        return set()
    here = file.here(e)
    pairs = (pair for line in fields.docket.reviews for pair in line.line["grounds"].items())
    return {(here[g], here[h]) for g, h in pairs if g in here and h in here}


def _native_review(
    e: Entity, fact: Fact, names: Mapping[str, str], skip: Set[tuple[str, str]], last: Mapping[str, str]
) -> list[_Out]:
    """One review line for the review marks made here on a claim or decision and still
    standing (`skip`: the grounds it owes a review on now for a cause of their own, and those
    its ledger's own review lines hold, written with those lines); its time, author, session
    and note those of the record's last review here (`last`), when known."""
    marks = [
        m for m in fact.reviewed if m.ground in names and m.head in names and (m.ground, m.head) not in skip
    ]
    if fact.kind == "question" or not marks:
        return []
    trail = e.ledger.docket if e.ledger is not None else None
    numbers = [int(line.line["id"].rsplit(".r", 1)[1]) for line in trail.reviews] if trail else []
    name = names[e.id]
    at = last.get("id") or max([e.created, *(m.as_of for m in marks)])
    line = {
        "schema": docket.SCHEMA,
        "kind": "review",
        "id": f"{name}.r{max(numbers, default=0) + 1}",
        "reviews": name,
        "grounds": {names[m.ground]: names[m.head] for m in marks},
        "note": last.get("note", ""),
        **_stamped(e),
        "ts": _iso(at),
        **{k: last[k] for k in ("author", "session") if k in last},
    }
    return [_Out((at, 1), line)]


def _text(out: _Out) -> str:
    """A line's text: as its ledger wrote it (keys in its order, its separators), or compact
    in Docket's key order for a line written here."""
    if out.kept is None:
        return json.dumps(out.line, ensure_ascii=False, separators=docket.COMPACT)
    return docket.written(out.line, out.kept)
