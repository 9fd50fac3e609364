"""The ledger's exchange with other tools: a Docket schema-2 ledger in, decision rows out
(the Parquet export of evaluation mining)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from service.model import commands
from service.model.commands import Clock
from service.model.config import WorkspaceConfig
from service.model.derived import DEFAULT_REASON, derive
from service.model.errors import Invalid
from service.model.events import Assertion, EntityWhy, Event, LedgerFields, Link, make
from service.model.ledger import KINDS, aliases, check_record
from service.model.state import DEFAULT_STATES, Entity, Fact, State

DOCKET_DECISION_STATES = {
    "adopted": "adopted",
    "accepted": "adopted",
    "proposed": "adopted",
    "revoked": "revoked",
    "rejected": "revoked",
    "abandoned": "revoked",
}
_DOCKET_PROVENANCE = ("ts", "session", "author", "branch")


def _strs(value: Any, where: str, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise Invalid(f"{where}: {name} is neither a string nor a list of strings")


def import_docket(
    state: State, config: WorkspaceConfig, clock: Clock, rows: Sequence[tuple[int, Mapping[str, Any]]]
) -> list[Event]:
    """Events for the records of a Docket schema-2 ledger (`rows`: line number, record).

    Each record becomes a claim, decision or question with its relations; its Docket id is
    kept as the record's alias (accepted wherever an id is), and a record whose alias is
    already here is skipped, so importing twice adds nothing. Records wait at search
    exposure (pinned ones at index); every write rule applies, and relations must name
    records earlier in the file or already here.
    """
    known = aliases(state)
    scratch = msgspec.structs.replace(state, entities=dict(state.entities), ledger=dict(state.ledger))
    events: list[Event] = []
    for number, raw in rows:
        where = f"line {number}"
        docket_id = raw.get("id")
        kind = raw.get("kind")
        text = raw.get("text")
        if not isinstance(docket_id, str) or not docket_id:
            raise Invalid(f"{where}: a record needs an id")
        if kind not in KINDS:
            raise Invalid(f"{where} ({docket_id}): kind {kind!r} is not claim, decision or question")
        if not isinstance(text, str) or not text.strip():
            raise Invalid(f"{where} ({docket_id}): the text is empty")
        if docket_id in known:
            continue
        new_id = clock.new_id()

        def here(old: str, name: str, docket_id: str = docket_id, where: str = where) -> str:
            if old in known:
                return known[old]
            raise Invalid(f"{where} ({docket_id}): {name} {old} names no record earlier in the ledger")

        links: list[Link] = []
        supports = raw.get("supports") or []
        if not isinstance(supports, list):
            raise Invalid(f"{where} ({docket_id}): supports is not a list of id lists")
        for group, members in enumerate(supports):
            for member in dict.fromkeys(_strs(members, where, "supports")):
                links.append(Link("supports", here(member, "supports"), group))
        for name, link_type in (
            ("depends_on", "depends-on"),
            ("answers", "answers"),
            ("supersedes", "supersedes"),
        ):
            for target in dict.fromkeys(_strs(raw.get(name), where, name)):
                links.append(Link(link_type, here(target, name)))
        recorded = raw.get("state")
        state_word: str | None = None
        revoked = False
        if kind == "claim":
            state_word = recorded if isinstance(recorded, str) else None
        elif kind == "decision" and recorded is not None:
            if recorded not in DOCKET_DECISION_STATES:
                raise Invalid(
                    f"{where} ({docket_id}): decision state {recorded!r} is not one of adopted, revoked"
                )
            revoked = DOCKET_DECISION_STATES[str(recorded)] == "revoked"
        pinned = bool(raw.get("pinned"))
        superseding = any(link.type == "supersedes" for link in links)
        reason = raw.get("supersede_reason")
        fields = LedgerFields(
            state=state_word,
            choice=raw.get("choice") or None,
            alternatives=_strs(raw.get("alternatives"), where, "alternatives"),
            decided_by=raw.get("decided_by") or None,
            supersede_reason=(reason if isinstance(reason, str) else DEFAULT_REASON) if superseding else None,
            applies_to=_strs(raw.get("scope"), where, "scope"),
            evidence=_strs(raw.get("evidence"), where, "evidence"),
            revisit=str(raw["revisit"])[:10] if raw.get("revisit") else None,
            cost_if_wrong=raw.get("cost_if_wrong") or None,
            pinned=pinned,
            alias=docket_id,
        )
        try:
            check_record(scratch, new_id, kind, text, fields, links)
        except Invalid as exc:
            raise Invalid(f"{where} ({docket_id}): {exc}") from exc
        refs: dict[str, object] = {"docket": docket_id}
        refs |= {key: raw[key] for key in _DOCKET_PROVENANCE if isinstance(raw.get(key), str) and raw[key]}
        rationale = raw.get("rationale")
        payload = Assertion(
            entity=new_id,
            text=text.strip(),
            labels=(kind,),
            links=tuple(links),
            exposure="index" if pinned else "search",
            scope="project",
            why=rationale if isinstance(rationale, str) and rationale else None,
            ledger=fields,
        )
        events.append(make(new_id, clock.now, "entity.confirmed", clock.origin, clock.project, payload, refs))
        if revoked:
            events.append(
                commands.event(clock, "entity.revoked", EntityWhy(new_id, "revoked in the Docket ledger"))
            )
        known[docket_id] = new_id
        scratch.entities[new_id] = Entity(
            id=new_id,
            project=clock.project,
            text=text,
            labels=[kind],
            links=links,
            criteria=[],
            covered=[],
            exposure="search",
            priority=None,
            scope="project",
            status="confirmed",
            created=new_id,
            updated=new_id,
            ledger=fields,
        )
        scratch.ledger[new_id] = Fact(kind=kind, state=DEFAULT_STATES[kind], changed=new_id)
        for link in links:
            if link.type == "supersedes":
                old = scratch.entities[link.target]
                scratch.entities[link.target] = msgspec.structs.replace(old, status="superseded")
                scratch.ledger[link.target] = msgspec.structs.replace(
                    scratch.ledger[link.target], current=False
                )
    return events


def decision_rows(state: State) -> list[dict[str, Any]]:
    """One row per decision: what was chosen over what, its grounds, its derived status and
    its known outcome (standing, revoked, retracted, or superseded with the reason)."""
    views = derive(state)
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
                "blocked_by": list(view.blocked_by),
                "answers": list(fact.answers),
                "outcome": known,
                "superseded_by": fact.superseded_by,
                "created": e.created,
                "changed": fact.changed,
            }
        )
    return rows
