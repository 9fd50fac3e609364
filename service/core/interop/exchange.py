"""The ledger's exchange with other tools: a Docket schema-2 ledger in (out: `docket_out`), decision rows
out (the Parquet export of evaluation mining)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from service.core.commands import commands
from service.core.commands.commands import Clock
from service.core.commands.config import WorkspaceConfig
from service.core.events.events import (
    EXPOSURES,
    Assertion,
    DocketTrail,
    EntityWhy,
    Event,
    Exposure,
    LedgerFields,
    Link,
    Reviewed,
    ReviewMark,
    as_dict,
    make,
)
from service.core.fold import fold
from service.core.fold.state import Entity, State
from service.core.gates import caps, sanitize
from service.core.gates.sanitize import Unsanitary
from service.core.ledger import docket
from service.core.ledger.derived import DEFAULT_REASON, derive
from service.core.ledger.ledger import aliases, objections
from service.core.projections import render
from service.core.projections.views import work_word

NATIVE_VERBS = {"claim": "claim", "decision": "decide", "question": "question"}


def import_lines(
    state: State, config: WorkspaceConfig, clock: Clock, lines: Sequence[tuple[int, Any]]
) -> tuple[list[Event], dict[str, Any]]:
    """`import_docket` of the ledger whose lines (number, parsed JSON) are `lines`."""
    return import_docket(state, config, clock, docket.read(lines))


def import_docket(
    state: State, config: WorkspaceConfig, clock: Clock, book: docket.Ledger
) -> tuple[list[Event], dict[str, Any]]:
    """Events for the records of a Docket ledger read by `docket.read`, and a summary.

    A record keeps its Docket id as its alias, within the id space of its ledger (`source`):
    a second ledger's `c1` is another record, and a record of this ledger already here is
    skipped, so importing a grown ledger adds what it gained. Current records are placed
    as a native add would place them (pinned ones full, others by the verb's alias row),
    one tier lower while a tier is over its cap; superseded ones wait at search. Records
    are kept as written: what the write rules would refuse is counted, not refused.
    Reviews become `entity.reviewed` marks on the flags they pinned that are still owed.
    """
    known = aliases(state, book.identity)
    before = dict(known)
    fresh = [r for r in book.records if r.id not in known]
    retired = book.retired()
    places, demoted = _placements(state, config, [r for r in fresh if r.id not in retired])
    events: list[Event] = []
    kept: dict[str, int] = {}
    for record in fresh:
        new_id = clock.new_id()
        links = _links(record, known)
        fields = ledger_fields(record, book.identity)
        for rule, _ in objections(record.kind, record.fields["text"], fields):
            kept[rule] = kept.get(rule, 0) + 1
        exposure, priority = places.get(record.id, ("search", None))
        rationale = record.fields["rationale"]
        payload = Assertion(
            entity=new_id,
            text=record.fields["text"].strip(),
            labels=(record.kind,),
            links=tuple(links),
            exposure=exposure,
            priority=priority,
            scope="project",
            why=rationale if rationale.strip() else None,
            ledger=fields,
        )
        refs = _refs(record, book)
        confirmed = make(new_id, clock.now, "entity.confirmed", clock.origin, clock.project, payload, refs)
        events.append(_sanitary(confirmed, record))
        if record.kind == "decision" and record.fields["state"] == "revoked":
            events.append(
                commands.event(clock, "entity.revoked", EntityWhy(new_id, "revoked in the Docket ledger"))
            )
        known[record.id] = new_id
    events += _reviews(state, clock, book, known, events)
    tiers = [places.get(r.id, ("search", None))[0] for r in fresh]
    summary: dict[str, Any] = {
        "ledger": book.identity,
        "records": len(book.records),
        "imported": len(fresh),
        "skipped": len(book.records) - len(fresh),
        "corrections": sum(len(r.corrections) for r in fresh),
        "corrections_not_applied": _late_corrections(state, book, before),
        "reviews": sum(1 for e in events if e.type == "entity.reviewed"),
        "placed": {tier: tiers.count(tier) for tier in EXPOSURES},
        "superseded": sum(1 for r in fresh if r.id in retired),
        "demoted": demoted,
        "kept_as_written": dict(sorted(kept.items())),
        "not_read": dict(book.ignored),
    }
    return events, summary


def _sanitary(event: Event, record: docket.Record) -> Event:
    """The event, if the sanitize gate (the append runs it again) lets it pass; a refusal
    names the ledger line the record came from."""
    try:
        sanitize.check_event(as_dict(event))
    except Unsanitary as exc:
        where = f"line {record.line} ({record.id})"
        raise Unsanitary([(f"{where} {path}", kind) for path, kind in exc.findings]) from exc
    return event


def _late_corrections(state: State, book: docket.Ledger, before: Mapping[str, str]) -> list[str]:
    """Correction lines of records imported before that came after that import (a record is
    imported once, as it read then; `self claim assess`, supersession and the like change it
    here)."""
    late: list[str] = []
    for record in book.records:
        entity = state.entities.get(before.get(record.id, ""))
        if entity is not None and entity.ledger is not None:
            late += [c for c in record.corrections if c not in entity.ledger.corrections]
    return late


def _links(record: docket.Record, known: Mapping[str, str]) -> list[Link]:
    """The record's relations as typed links (the reader saw that each names an earlier one)."""
    raw = record.fields
    links = [
        Link("supports", known[member], group)
        for group, members in enumerate(raw["supports"])
        for member in members
    ]
    for name, link_type in (
        ("depends_on", "depends-on"),
        ("answers", "answers"),
        ("supersedes", "supersedes"),
    ):
        links += [Link(link_type, known[target]) for target in raw[name]]
    return links


def ledger_fields(record: docket.Record, source: str) -> LedgerFields:
    """The ledger fields of an imported record: its Docket fields, and its lines as written."""
    raw = record.fields
    reason = raw.get("supersede_reason") or DEFAULT_REASON
    return LedgerFields(
        state=raw["state"] if record.kind == "claim" else None,
        choice=raw.get("choice") or None,
        alternatives=tuple(raw.get("alternatives", ())),
        decided_by=raw.get("decided_by") or None,
        supersede_reason=reason if raw["supersedes"] else None,
        applies_to=tuple(raw["scope"]),
        evidence=tuple(raw["evidence"]),
        revisit=raw["revisit"] or None,
        cost_if_wrong=raw["cost_if_wrong"] or None,
        pinned=raw["pinned"],
        alias=record.id,
        source=source,
        corrections=tuple(record.corrections),
        docket=_trail(record) if record.written else None,
    )


def _trail(record: docket.Record) -> DocketTrail:
    """The record's lines as its ledger holds them: its own, its corrections, its reviews."""
    later = [docket.kept(w.line, w.text) for w in record.later]
    return DocketTrail(
        docket.kept(record.line, record.written),
        tuple(line for line in later if line.line.get("kind") == "correction"),
        tuple(line for line in later if line.line.get("kind") == "review"),
    )


def _refs(record: docket.Record, book: docket.Ledger) -> dict[str, object]:
    refs: dict[str, object] = {"docket": record.id, "docket_ledger": book.identity}
    refs |= {key: record.fields[key] for key in docket.PROVENANCE if record.fields[key]}
    if record.corrections:
        refs["docket_corrections"] = list(record.corrections)
    if record.fields.get("legacy"):
        refs["docket_legacy"] = record.fields["legacy"]
    if record.fields.get("migrated_from"):
        refs["docket_migrated_from"] = record.fields["migrated_from"]
    return refs


def _placements(
    state: State, config: WorkspaceConfig, current: list[docket.Record]
) -> tuple[dict[str, tuple[Exposure, int | None]], int]:
    """Where each current record goes: the tier and priority a native add gives it (pinned:
    full), one tier lower while that tier is over its cap. Pinned records are placed first,
    then the latest first. Returns the placements and how many went below their tier."""
    table = config.alias_table()
    per_char = config.tokens_per_char
    spent = caps.usage(state.live(), "project", per_char)
    places: dict[str, tuple[Exposure, int | None]] = {}
    demoted = 0
    for record in sorted(current, key=lambda r: (not r.fields["pinned"], -r.line)):
        row = table.get(NATIVE_VERBS[record.kind])
        native: Exposure = row.exposure if row is not None else "search"
        native = "full" if record.fields["pinned"] else native
        draft = Entity(
            id="",
            project="",
            text=record.fields["text"].strip(),
            labels=[record.kind],
            links=[],
            criteria=[],
            covered=[],
            exposure=native,
            priority=None,
            scope="project",
            status="confirmed",
            created="",
            updated="",
            why=record.fields["rationale"] or None,
        )
        tier = native
        while tier != "search":
            cost = render.cost(draft, tier, per_char)
            if not caps.over(tier, spent[tier] + cost, spent[tier], config):
                spent[tier] += cost
                break
            tier = caps.one_tier_down(tier)
        demoted += tier != native
        places[record.id] = (tier, row.priority if row is not None else None)
    return places, demoted


def _reviews(
    state: State, clock: Clock, book: docket.Ledger, known: Mapping[str, str], events: list[Event]
) -> list[Event]:
    """One `entity.reviewed` per review line that still clears a flag: the flags owed once
    the records are in whose ground and head the line pinned (Docket clears a flag while
    the head it was reviewed at is still the head)."""
    pending = [(record, review) for record in book.records for review in record.reviews]
    if not pending:
        return []
    after = fold.fold(events, msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=State))
    views = derive(after, [known[record.id] for record, _ in pending])
    out: list[Event] = []
    for record, review in pending:
        record_id = known[record.id]
        pins = {(known[ground], known[head]) for ground, head in review.grounds.items()}
        marks = tuple(
            ReviewMark(o.ground, o.head, o.reason, o.as_of)
            for o in views[record_id].review_owed
            if (o.ground, o.head) in pins
            and ReviewMark(o.ground, o.head, o.reason, o.as_of) not in after.ledger[record_id].reviewed
        )
        if marks:
            payload = Reviewed(record_id, marks, review.note or None)
            out.append(commands.event(clock, "entity.reviewed", payload, {"docket": review.id}))
    return out


def decision_rows(state: State) -> list[dict[str, Any]]:
    """One row per decision: what was chosen over what, its grounds, its derived status
    (whether it is blocked, and Docket's `applicable`: current, adopted, not blocked — what
    evaluation mining takes as labelled examples), its known outcome (standing, revoked,
    retracted, or superseded with the reason), its alias when imported, and the work units
    it led to: those linking to it, with where each stands (the shell adds the files each
    changed, when it can)."""
    views = derive(state)
    led: dict[str, list[dict[str, Any]]] = {}
    for unit in sorted((e for e in state.entities.values() if "work" in e.labels), key=lambda e: e.id):
        for target in dict.fromkeys(link.target for link in unit.links):
            led.setdefault(target, []).append({"id": unit.id, "state": work_word(unit)})
    rows: list[dict[str, Any]] = []
    for record_id in sorted(views):
        view = views[record_id]
        e = state.entities.get(record_id)
        if view.kind != "decision" or e is None:
            continue
        fact = state.ledger[record_id]
        fields = e.ledger or LedgerFields()
        successor = state.ledger.get(fact.superseded_by) if fact.superseded_by else None
        if fact.retracted:
            known = "retracted"
        elif fact.superseded_by is not None:
            reason = (successor.reason if successor is not None else None) or DEFAULT_REASON
            known = f"superseded: {reason}"
        else:
            known = "revoked" if fact.state == "revoked" else "standing"
        rows.append(
            {
                "id": record_id,
                "project": e.project,
                "text": e.text,
                "choice": fields.choice,
                "alternatives": list(fields.alternatives),
                "decided_by": fields.decided_by,
                "rationale": e.why,
                "state": fact.state,
                "current": fact.current,
                "support": view.support,
                "supports": [list(group) for group in fact.supports],
                "review_owed": [o.ground for o in view.review_owed],
                "depends_on": list(fact.depends_on),
                "blocked": view.blocked,
                "applicable": bool(view.applicable),
                "blocked_by": list(view.blocked_by),
                "answers": list(fact.answers),
                "outcome": known,
                "superseded_by": fact.superseded_by,
                "alias": fields.alias,
                "work": led.get(record_id, []),
                "created": e.created,
                "changed": fact.changed,
            }
        )
    return rows
