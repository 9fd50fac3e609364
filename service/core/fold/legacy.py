"""Superself's pre-entity kinds, read as entities the way Superself's own fold reads them.

Before its entity cutover Superself wrote one event family per record kind: `goal.set`,
`decision.*`, `convention.*`, `objective.*`, `milestone.*` and `work.*`. A goal, decision or
convention is named by its event id and its successors and withdrawals name it in `refs`
(`supersedes`, `confirms`, `retracts`, `declines`); objectives, milestones and work units
carry their own ids in the payload. Every rule here follows Superself's fold
(`apps/cli/src/model.ts`, `objectives.ts`, `entities.ts`); docs/importing.md ("Importing
from Superself") has the table. Records are made and withdrawn through the fold's own handlers
(passed in, so this module does not import the fold); the legacy-only transitions — a
revision in place, a done Superself's verbs judged, a start that reopens a done unit — edit
the entity here.

A legacy done (`work.done`, `milestone.reached`, `objective.closed` as reached) skips the
completion gate only as `entity.done` does: when the import's voucher names it
(`completion.vouched`). Superself's fold applied every one, because only its verbs, which
held the gate, wrote them; here any event can arrive by sync or push, so one no voucher
names goes through the fold's own `entity.done`, gate included.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import msgspec

from service.core.events.events import (
    Assertion,
    Covered,
    EntityWhy,
    Event,
    Exposure,
    Legacy,
    Link,
    Linked,
    Payload,
    Superseded,
)
from service.core.fold.state import LIVE_STATUSES, Entity, State
from service.core.ledger import completion

Handlers = Mapping[str, Callable[[State, Event, Payload], None]]

# Where each kind sat in Superself's context: exposure and priority.
PLACEMENT: dict[str, tuple[Exposure, int | None]] = {
    "goal": ("full", 0),
    "objective": ("full", 10),
    "milestone": ("index", 20),
    "convention": ("full", 30),
    "decision": ("index", 40),
    "work": ("search", None),
}


@dataclass(frozen=True, slots=True)
class _Read:
    """One legacy event being read: the state, the event, its payload, the fold's handlers."""

    state: State
    event: Event
    payload: Legacy
    handlers: Handlers

    def call(self, kind: str, payload: Payload) -> None:
        self.handlers[kind](self.state, msgspec.structs.replace(self.event, type=kind), payload)

    def ref(self, key: str) -> list[str]:
        """A refs value as a list of ids (Superself wrote lists for supersedes, one id else)."""
        value = (self.event.refs or {}).get(key)
        if isinstance(value, str):
            return [value] if value else []
        if isinstance(value, list):
            return [item for item in value if isinstance(item, str) and item]
        return []

    def entity(self, entity_id: str | None) -> Entity | None:
        """The record an event names, marked updated; None (and no signal, as in Superself)
        when the log holds no such record."""
        entity = self.state.entities.get(entity_id or "")
        if entity is not None:
            entity.updated = self.event.id
        return entity


def read(state: State, event: Event, payload: Legacy, handlers: Handlers) -> None:
    """Fold one legacy event; kinds Superself's fold ignores are counted as unknown."""
    reader = READERS.get(event.type)
    if reader is None:
        state.unknown += 1
        return
    reader(_Read(state, event, payload, handlers))


_REVISION = re.compile(r"^(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{7,40}$")


def evidence(offered: object, notes: tuple[str, ...], typed: bool) -> tuple[list[str], list[str]]:
    """A Superself report's commits and notes. `refs.commits` holds commits, and before its
    evidence was typed (`evidenceTyped`) anything else the caller passed too, told apart by
    shape: hex, 7 to 40 long, a letter among the digits (a bare number is more often a build
    or a ticket than a commit)."""
    values = [v for v in offered if isinstance(v, str)] if isinstance(offered, list) else []
    if typed:
        return values, list(notes)
    commits = [v for v in values if _REVISION.match(v)]
    return commits, [*(v for v in values if not _REVISION.match(v)), *notes]


def _live(entity: Entity | None) -> bool:
    return entity is not None and entity.status in LIVE_STATUSES


def _replaceable(entity: Entity | None) -> bool:
    """Live and not reached: Superself keeps a reached record reached under a successor."""
    return _live(entity) and entity is not None and entity.execution != "done"


# --- records and their withdrawal -------------------------------------------------------------


def _create(
    r: _Read,
    entity_id: str,
    kind: str,
    text: str,
    *,
    proposed: bool = False,
    links: tuple[Link, ...] = (),
    criteria: tuple[str, ...] = (),
) -> None:
    """A new record of a legacy kind at that kind's placement. Confirmed, its `supersedes`
    links displace the live records they name; the rest stay as lineage only."""
    if entity_id in r.state.entities:
        return  # a union merge can carry a creation twice; the first is the record
    replacing = [link for link in links if link.type == "supersedes"]
    lineage = [link for link in replacing if not _replaceable(r.state.entities.get(link.target))]
    if not proposed:
        links = tuple(link for link in links if link not in lineage)
    exposure, priority = PLACEMENT[kind]
    target = r.payload.target if isinstance(r.payload.target, str) else None
    assertion = Assertion(
        entity=entity_id,
        text=text,
        labels=(kind,),
        links=links,
        criteria=criteria,
        exposure=exposure,
        priority=priority,
        why=r.payload.why if kind == "decision" else None,
        target=target,
        expires=r.payload.expires if proposed else None,
    )
    r.call("entity.proposed" if proposed else "entity.confirmed", assertion)
    if not proposed:
        r.state.entities[entity_id].links.extend(lineage)


def _withdraw(r: _Read, entity_id: str | None, why: str | None) -> None:
    """Retraction of a live record; the first withdrawal is the one that happened."""
    if _live(r.state.entities.get(entity_id or "")) and entity_id:
        r.call("entity.retracted", EntityWhy(entity_id, why))


def _confirm(r: _Read, entity_id: str | None) -> None:
    entity = r.state.entities.get(entity_id or "")
    if entity is not None and entity.status == "proposed":
        r.call("entity.confirmed", Assertion(entity=entity.id))


# --- goal, decision, convention ---------------------------------------------------------------


def _goal_set(r: _Read) -> None:
    """Every goal.set is a goal; it supersedes the live goals before it (latest wins)."""
    project = r.event.project
    goals = r.state.entities.values()
    before = [e.id for e in goals if "goal" in e.labels and e.live and e.project == project]
    links = tuple(Link("supersedes", old) for old in before)
    _create(r, r.event.id, "goal", r.payload.text or "", links=links)


def _decision(r: _Read) -> None:
    verb = r.event.type.partition(".")[2]
    if verb == "confirmed" and r.ref("confirms"):
        for proposal in r.ref("confirms"):
            _confirm(r, proposal)
    elif verb in ("proposed", "confirmed"):
        links = tuple(Link("supersedes", old) for old in r.ref("supersedes"))
        _create(r, r.event.id, "decision", r.payload.text or "", proposed=verb == "proposed", links=links)
    else:  # retracted, declined
        for target in r.ref("retracts" if verb == "retracted" else "declines"):
            _withdraw(r, target, r.payload.why)


def _convention(r: _Read) -> None:
    """convention.added with refs.supersedes replaces; convention.dropped withdraws the
    conventions its refs.supersedes names (the reason in the payload, when written)."""
    if r.event.type == "convention.added":
        links = tuple(Link("supersedes", old) for old in r.ref("supersedes"))
        _create(r, r.event.id, "convention", r.payload.text or "", links=links)
    else:
        for target in r.ref("supersedes"):
            _withdraw(r, target, r.payload.why)


# --- objectives and milestones ----------------------------------------------------------------


def _objective(r: _Read) -> None:
    p = r.payload
    verb = r.event.type.partition(".")[2]
    if verb == "created":
        if p.objective:
            links = tuple(Link("supersedes", old) for old in r.ref("supersedes"))
            _create(r, p.objective, "objective", p.outcome or "", proposed=p.proposed, links=links)
        return
    entity = r.entity(p.objective)
    if entity is None or not entity.live:
        return  # reached, dropped, declined and superseded objectives take no transition
    if verb == "confirmed":
        _confirm(r, entity.id)
    elif verb == "declined" and entity.status == "proposed":
        _withdraw(r, entity.id, p.why)
    elif verb == "revised":
        _revise(entity, p)
        entity.why = p.why
    elif verb == "closed" and p.as_ == "reached":
        _finish(r, entity, p.why or "reached")
    elif verb == "closed":
        _withdraw(r, entity.id, p.why)


def _revise(entity: Entity, p: Legacy) -> None:
    """A revision in place: the same id, a new outcome or target (null withdraws it)."""
    if p.outcome:
        entity.text = p.outcome
    if p.target is not msgspec.UNSET:
        entity.target = p.target if isinstance(p.target, str) else None


def _finish(r: _Read, entity: Entity, why: str | None) -> None:
    """A legacy close as reached or done. One the import vouched for was judged by
    Superself's verbs when it was written, so no gate reruns; any other is a done like
    another, ruled by the completion gate (the fold's `entity.done`, its signal when refused)."""
    if not completion.vouched(r.state, r.event):
        r.call("entity.done", EntityWhy(entity.id, why))
        return
    entity.execution = "done"
    entity.blocked_on = None
    entity.closed_why = why


def _milestone(r: _Read) -> None:
    p = r.payload
    verb = r.event.type.partition(".")[2]
    if verb == "created":
        _milestone_created(r)
        return
    entity = r.entity(p.milestone)
    if entity is None or entity.status not in LIVE_STATUSES:
        return  # dropped and superseded milestones are finished with; a reached one is not
    if verb == "dropped":
        _withdraw(r, entity.id, p.why)
    elif verb == "revised":
        _revise(entity, p)
        _revise_exits(r.state, entity, p)
    elif verb in ("covered", "rechecked") and p.criterion:
        text = r.state.exits.get(entity.id, {}).get(p.criterion)
        if text is not None and text in entity.criteria:
            r.call("entity.covered", Covered(entity.id, text, p.why))
    elif verb == "reached":
        _finish(r, entity, "reached")


def _milestone_created(r: _Read) -> None:
    p = r.payload
    objective = r.state.entities.get(p.objective or "")
    if not p.milestone or objective is None or "objective" not in objective.labels:
        return  # Superself filed a milestone under its objective: with none, it is lost
    r.state.exits[p.milestone] = {c.id: c.text for c in p.exit}
    links = [Link("member-of", objective.id)]
    links += [Link("supersedes", p.supersedes)] if p.supersedes else []
    criteria = tuple(c.text for c in p.exit)
    _create(r, p.milestone, "milestone", p.outcome or "", links=tuple(links), criteria=criteria)


def _revise_exits(state: State, entity: Entity, p: Legacy) -> None:
    """Dropped criteria leave the milestone (their coverage with them); added ones join it."""
    exits = state.exits.setdefault(entity.id, {})
    for dropped in p.drop_exit:
        text = exits.get(dropped)
        if text in entity.criteria:
            entity.criteria.remove(text)
        if text in entity.covered:
            entity.covered.remove(text)
    for added in p.add_exit:
        exits[added.id] = added.text
        entity.criteria.append(added.text)


# --- work units and proposals -----------------------------------------------------------------


def _work(r: _Read) -> None:
    p = r.payload
    verb = r.event.type.partition(".")[2]
    if verb == "created":
        if p.work:
            _create(r, p.work, "work", p.outcome or "")
        return
    if verb == "proposed":
        _create(r, r.event.id, "work", p.outcome or "", proposed=True)
        return
    if verb in ("accepted", "declined"):
        _answer_proposal(r, verb)
        return
    unit = r.entity(p.work)
    if unit is None:
        return
    if verb in _REQUIREMENT_STEPS:
        _REQUIREMENT_STEPS[verb](r, unit)  # what the unit owes is read whatever its state
    elif unit.execution != "retired" or verb in ("retired", "linked", "unlinked"):
        _WORK_STEPS[verb](r, unit)  # retirement is terminal for the working state; done is not


def _answer_proposal(r: _Read, verb: str) -> None:
    """work.accepted: the unit it minted (payload.work) succeeds the proposal;
    work.declined withdraws it. A proposal is answered once."""
    proposal = r.state.entities.get(r.payload.proposal or "")
    if proposal is None or proposal.status != "proposed":
        return
    if verb == "accepted":
        r.call("entity.superseded", Superseded(proposal.id, by=r.payload.work))
    else:
        _withdraw(r, proposal.id, r.payload.why)


def _start(r: _Read, unit: Entity) -> None:
    unit.execution = "in-progress"
    unit.started = True
    unit.blocked_on = None


def _block(r: _Read, unit: Entity) -> None:
    unit.execution = "blocked"
    unit.blocked_on = r.payload.on or r.payload.why or "unspecified"
    unit.blocked_why = r.payload.why


def _done(r: _Read, unit: Entity) -> None:
    _finish(r, unit, r.payload.why)


def _retire(r: _Read, unit: Entity) -> None:
    """Retired with its reason; a named successor reads as the unit it went to."""
    unit.execution = "retired"
    unit.blocked_on = None
    unit.closed_why = r.payload.why
    unit.superseded_by = r.payload.successor


def _link(r: _Read, unit: Entity) -> None:
    kind = "entity.linked" if r.event.type == "work.linked" else "entity.unlinked"
    for target in (r.payload.objective, r.payload.milestone):
        if target:
            r.call(kind, Linked(unit.id, Link("member-of", target)))


def _require(r: _Read, unit: Entity) -> None:
    """work.required: a criterion; a requirement id declared twice gets a suffix, as in Superself."""
    exits = r.state.exits.setdefault(unit.id, {})
    declared = r.payload.requirement or f"r{len(exits) + 1}"
    rid, attempt = declared, 1
    while rid in exits:
        attempt += 1
        rid = f"{declared}-{attempt}"
    exits[rid] = r.payload.text or ""
    unit.criteria.append(exits[rid])


def _cover_requirement(r: _Read, unit: Entity) -> None:
    text = r.state.exits.get(unit.id, {}).get(r.payload.requirement or "")
    if text is not None and text in unit.criteria and text not in unit.covered:
        unit.covered.append(text)


def _restate_requirement(r: _Read, unit: Entity) -> None:
    """A revised requirement is a new text; the coverage judged against the old one is stale."""
    exits = r.state.exits.get(unit.id, {})
    rid = r.payload.requirement or ""
    old = exits.get(rid)
    if old is None or old not in unit.criteria or not r.payload.text:
        return
    exits[rid] = r.payload.text
    unit.criteria[unit.criteria.index(old)] = r.payload.text
    if old in unit.covered:
        unit.covered.remove(old)


def _retire_requirement(r: _Read, unit: Entity) -> None:
    text = r.state.exits.get(unit.id, {}).get(r.payload.requirement or "")
    if text is not None and text in unit.criteria:
        unit.criteria.remove(text)
        if text in unit.covered:
            unit.covered.remove(text)


_REQUIREMENT_STEPS: dict[str, Callable[[_Read, Entity], None]] = {
    "required": _require,
    "covered": _cover_requirement,
    "rechecked": _cover_requirement,
    "requirement-revised": _restate_requirement,
    "requirement-retired": _retire_requirement,
}

_WORK_STEPS: dict[str, Callable[[_Read, Entity], None]] = {
    "started": _start,
    "unblocked": _start,  # Superself's legacy unblock makes the unit active, blocked or not
    "blocked": _block,
    "done": _done,
    "retired": _retire,
    "linked": _link,
    "unlinked": _link,
}

READERS: dict[str, Callable[[_Read], None]] = {
    "goal.set": _goal_set,
    **{f"decision.{verb}": _decision for verb in ("proposed", "confirmed", "retracted", "declined")},
    **{f"convention.{verb}": _convention for verb in ("added", "dropped")},
    **{f"objective.{verb}": _objective for verb in ("created", "confirmed", "declined", "revised", "closed")},
    **{
        f"milestone.{verb}": _milestone
        for verb in ("created", "revised", "dropped", "covered", "rechecked", "reached")
    },
    **{
        f"work.{verb}": _work
        for verb in ("created", "proposed", "accepted", "declined", *_WORK_STEPS, *_REQUIREMENT_STEPS)
    },
}
