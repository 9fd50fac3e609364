"""Commands: a request and the current state in, the events to append out (or a refusal).

Every function is pure. The shell runs it inside a store transaction (under the lock, on
fresh state) and hands the events to the append gate. `Clock` supplies the ids and the one
timestamp all events of a command share.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from typing import cast

import msgspec

from service.core.commands.config import WorkspaceConfig
from service.core.errors import Invalid, Refused, slot
from service.core.events import ids
from service.core.events.events import (
    EXPOSURES,
    SLUG_PATTERN,
    SLUG_RULE,
    Assertion,
    Blocked,
    Covered,
    EntityWhy,
    Event,
    Exposure,
    LedgerFields,
    Link,
    Linked,
    Origin,
    Payload,
    Placed,
    ProjectAdded,
    ProjectChanged,
    ReportAdded,
    RunExited,
    RunStarted,
    Scope,
    make,
)
from service.core.fold.state import Entity, Project, Report, State
from service.core.gates import caps
from service.core.ledger import completion

SLUG = re.compile(SLUG_PATTERN)
LINK_TYPES = ("member-of", "supersedes", "relates")
RESERVED_SLUGS = frozenset({"workspace", "projects"})
DECLINED = "declined"  # the why of a decline given without one


class Clock(msgspec.Struct, frozen=True):
    """Where new ids and the shared timestamp come from (the shell's HLC and wall clock)."""

    new_id: Callable[[], str]
    now: str
    origin: Origin
    project: str


class AddRequest(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    labels: tuple[str, ...] = ()
    exposure: str = "search"
    priority: int | None = None
    scope: str = "project"
    criteria: tuple[str, ...] = ()
    target: str | None = None
    why: str | None = None
    supersedes: str | None = None
    links: tuple[Link, ...] = ()
    demote: tuple[str, ...] = ()
    ledger: LedgerFields | None = None
    duplicate: bool = False


def _event(
    clock: Clock,
    event_type: str,
    payload: Payload,
    refs: dict[str, object] | None = None,
    confirmed: bool | None = None,
) -> Event:
    origin = clock.origin
    if confirmed is not None and confirmed != origin.confirmed:
        origin = msgspec.structs.replace(origin, confirmed=confirmed)
    return make(clock.new_id(), clock.now, event_type, origin, clock.project, payload, refs)


event = _event  # for the commands of other model modules (the ledger's)


# --- validation -------------------------------------------------------------------------


def valid_slug(slug: str) -> str:
    if not SLUG.match(slug) or slug in RESERVED_SLUGS:
        raise Invalid(
            f"{slug!r} is not a valid project slug: use {SLUG_RULE} (not 'workspace' or 'projects')",
            field="slug",
        )
    return slug


def valid_date(text: str) -> str:
    try:
        return dt.date.fromisoformat(text).isoformat() if len(text) == 10 else _bad_date(text)
    except ValueError:
        return _bad_date(text)


def _bad_date(text: str) -> str:
    raise Invalid(f"{text!r} is not a date: use YYYY-MM-DD, e.g. 2099-03-31", field="target")


def _text(text: str, field: str = "text") -> str:
    text = text.strip()
    if not text:
        what = "text" if field == "text" else slot(field)
        raise Invalid(
            f"the {what} is empty: give the record's text in quotes", code="missing-value", field=field
        )
    return text


def _exposure(value: str) -> Exposure:
    if value not in EXPOSURES:
        raise Invalid(f"exposure {value!r} is not one of {', '.join(EXPOSURES)}", field="exposure")
    return value


def _scope(value: str) -> Scope:
    if value not in ("project", "workspace"):
        raise Invalid(f"scope {value!r} is not project or workspace", field="scope")
    return cast(Scope, value)


def _priority(value: int | None) -> int | None:
    if value is not None and value < 0:
        raise Invalid(f"priority {value} is negative: use 0 (top of context) or more", field="priority")
    return value


def find(state: State, prefix: str, field: str = "record") -> Entity:
    """The entity an id, a unique id prefix or an imported record's alias names in `state`;
    a refusal names `field`, the command field that gave the prefix."""
    try:
        return _find(state, prefix)
    except Invalid as exc:
        if field == exc.field:
            raise
        raise Invalid(exc.template, code=exc.code, field=field, **exc.about) from exc


def _find(state: State, prefix: str) -> Entity:
    try:
        return state.entities[ids.resolve(prefix, state.entities, "record")]
    except Invalid as exc:
        named = [e for e in state.entities.values() if e.ledger is not None and e.ledger.alias == prefix]
        if len(named) > 1:  # two imported ledgers each had one
            listed = ", ".join(sorted(e.id for e in named))
            what = f"{prefix} is the alias of {len(named)} imported records ({listed})"
            raise Invalid(
                f"{what}: give the id of the one you mean", code="ambiguous-prefix", field="record"
            ) from exc
        if named:
            return named[0]
        raise


# --- asserting records ------------------------------------------------------------------


def add(state: State, config: WorkspaceConfig, clock: Clock, request: AddRequest) -> list[Event]:
    """A new record, with its demotions; refused past a retention cap."""
    text = _text(request.text)
    exposure = _exposure(request.exposure)
    scope = _scope(request.scope)
    target = valid_date(request.target) if request.target else None
    links = list(request.links)
    replaced: list[Entity] = []
    if request.supersedes:
        old = find(state, request.supersedes, "supersedes")
        if not old.live:
            raise Invalid(
                f"{old.id} is {old.status}: only a live record can be superseded",
                code="wrong-state",
                field="supersedes",
            )
        links.append(Link("supersedes", old.id))
        replaced.append(old)
    if not request.duplicate:
        _not_said_already(state, text, request.labels, replaced)
    demoted = [find(state, d, "demote") for d in request.demote]
    if demoted and not request.why:
        raise Invalid("a demotion records why: pass {why}", code="missing-value", field="why")
    entity_id = clock.new_id()
    draft = Entity(
        id=entity_id,
        project=clock.project,
        text=text,
        labels=list(request.labels),
        links=links,
        criteria=list(request.criteria),
        covered=[],
        exposure=exposure,
        priority=_priority(request.priority),
        scope=request.scope,
        status="confirmed",
        created=entity_id,
        updated=entity_id,
        target=target,
        why=request.why,
    )
    if caps.reaches([draft], demoted):
        caps.check(state.live(), [draft], replaced, demoted, config)
    proposed = not clock.origin.confirmed
    payload = Assertion(
        entity=entity_id,
        text=text,
        labels=tuple(request.labels),
        links=tuple(links),
        criteria=tuple(request.criteria),
        exposure=exposure,
        scope=scope,
        priority=request.priority,
        why=request.why,
        target=target,
        ledger=request.ledger,
    )
    kind = "entity.proposed" if proposed else "entity.confirmed"
    first = make(entity_id, clock.now, kind, clock.origin, clock.project, payload)
    return [
        first,
        *(_demotion(clock, d, request.why or "", entity_id if proposed else None) for d in demoted),
    ]


def _not_said_already(state: State, text: str, labels: tuple[str, ...], replaced: list[Entity]) -> None:
    """Refuse a record whose label and text a live record of the log has already (agents repeat
    themselves across sessions); superseding that record, or `duplicate`, lets it through."""
    label = labels[0] if labels else None
    gone = {e.id for e in replaced}
    for e in state.entities.values():
        if e.text == text and e.live and (e.labels[0] if e.labels else None) == label and e.id not in gone:
            raise Refused(
                f"{e.id} says this already (a live {label or 'record'}): pass {{duplicate}} to add it anyway",
                code="duplicate",
                field="duplicate",
                id=e.id,
            )


def _demotion(clock: Clock, entity: Entity, why: str, pair: str | None) -> Event:
    lower = caps.one_tier_down(entity.exposure)
    return _event(clock, "entity.placed", Placed(entity.id, exposure=_exposure(lower), why=why, pair=pair))


def confirm(state: State, clock: Clock, prefix: str) -> list[Event]:
    entity = find(state, prefix)
    waiting = entity.status == "proposed" or entity.pending or entity.id in state.pairs
    if not waiting:
        raise Invalid(f"nothing of {entity.id} waits on a person (it is {entity.status})", code="wrong-state")
    return [_event(clock, "entity.confirmed", Assertion(entity=entity.id), confirmed=True)]


def decline(state: State, clock: Clock, prefix: str, why: str | None) -> list[Event]:
    """A person's no to what waits on them: a proposed record is withdrawn with why (as
    Superself's declines fold); a placement waiting on a confirmed record is dropped and the
    record stays where it is (`entity.declined`)."""
    entity = find(state, prefix)
    reason = (why or "").strip() or DECLINED
    if entity.status == "proposed":
        return retract(state, clock, entity.id, reason)
    if not (entity.live and (entity.pending or entity.id in state.pairs)):
        raise Invalid(
            f"nothing of {entity.id} waits on a person (it is {entity.status}): only a proposal is declined",
            code="wrong-state",
        )
    return [_event(clock, "entity.declined", EntityWhy(entity.id, reason))]


def retract(state: State, clock: Clock, prefix: str, why: str) -> list[Event]:
    entity = find(state, prefix)
    if entity.status == "retracted":
        raise Invalid(f"{entity.id} is already retracted", code="wrong-state")
    return [_event(clock, "entity.retracted", EntityWhy(entity.id, _text(why, "why")))]


def place(
    state: State,
    config: WorkspaceConfig,
    clock: Clock,
    prefix: str,
    *,
    exposure: str | None = None,
    priority: int | None = None,
    scope: str | None = None,
    why: str | None = None,
    demote: Sequence[str] = (),
) -> list[Event]:
    """Move a record in context; moving up is capped, moving down records why."""
    entity = find(state, prefix)
    if not entity.live:
        raise Invalid(
            f"{entity.id} is not live ({entity.status}); only live records are placed", code="wrong-state"
        )
    if exposure is None and priority is None and scope is None:
        raise Invalid(
            "nothing to place: pass {exposure}, {priority} or {scope}",
            code="missing-value",
            field=("exposure", "priority", "scope"),
        )
    new_exposure = _exposure(exposure) if exposure else entity.exposure
    lowering = caps.rank(new_exposure) > caps.rank(entity.exposure)
    if lowering and not why:
        raise Invalid(
            f"demoting {entity.id} to {new_exposure} records why: pass {{why}}",
            code="missing-value",
            field="why",
        )
    if lowering and entity.exposure == "full" and clock.origin.actor == "agent" and clock.origin.confirmed:
        raise Refused(
            "demotion out of full is a person's call: record it with {proposed} and a person confirms it",
            code="person-required",
            field="proposed",
            id=entity.id,
        )
    demoted = [find(state, d, "demote") for d in demote]
    moved = msgspec.structs.replace(entity, exposure=new_exposure, scope=scope or entity.scope)
    if caps.reaches([moved], demoted):
        caps.check([e for e in state.live() if e.id != entity.id], [moved], [], demoted, config)
    placed = Placed(
        entity.id,
        exposure=_exposure(new_exposure) if exposure else None,
        priority=_priority(priority),
        scope=_scope(scope) if scope is not None else None,
        why=why,
    )
    first = _event(clock, "entity.placed", placed)
    pair = None if clock.origin.confirmed else entity.id
    return [first, *(_demotion(clock, d, why or "", pair) for d in demoted)]


def link(state: State, clock: Clock, prefix: str, link_type: str, target: str, remove: bool) -> list[Event]:
    entity = find(state, prefix)
    if link_type not in LINK_TYPES:
        raise Invalid(f"link type {link_type!r} is not one of {', '.join(LINK_TYPES)}", field="link_type")
    target_id = find(state, target, "target").id  # an id, a unique prefix or an alias
    if target_id == entity.id:
        raise Invalid("a record cannot link to itself", field="target")
    edge = Link(link_type, target_id)
    if remove and edge not in entity.links:
        raise Invalid(
            f"{entity.id} has no {link_type} link to {target_id}", code="wrong-state", field="target"
        )
    kind = "entity.unlinked" if remove else "entity.linked"
    return [_event(clock, kind, Linked(entity.id, edge))]


def cover(state: State, clock: Clock, prefix: str, criterion: str, why: str | None) -> list[Event]:
    entity = find(state, prefix)
    if not entity.criteria:
        raise Invalid(f"{entity.id} declares no criteria", code="wrong-state")
    chosen = _criterion(entity, criterion)
    if chosen in entity.covered:
        raise Invalid(f"{chosen!r} is already covered on {entity.id}", code="wrong-state", field="criterion")
    return [_event(clock, "entity.covered", Covered(entity.id, chosen, why))]


def _criterion(entity: Entity, given: str) -> str:
    if given.isdigit() and 1 <= int(given) <= len(entity.criteria):
        return entity.criteria[int(given) - 1]
    matches = [c for c in entity.criteria if c == given] or [
        c for c in entity.criteria if c.lower().startswith(given.lower())
    ]
    if len(matches) != 1:
        listed = "; ".join(f"{i}. {c}" for i, c in enumerate(entity.criteria, 1))
        raise Invalid(
            f"{given!r} names no single criterion of {entity.id}: {listed}",
            code="not-found",
            field="criterion",
        )
    return matches[0]


# --- execution ------------------------------------------------------------------------


def start(state: State, clock: Clock, prefix: str, head: str | None = None) -> list[Event]:
    """In progress; `head` is the linked checkout's commit as the work starts."""
    entity = _open_unit(state, prefix)
    if entity.execution == "in-progress":
        raise Invalid(f"{entity.id} is already in progress", code="wrong-state")
    return [_event(clock, "entity.started", EntityWhy(entity.id, commit=head))]


def block(state: State, clock: Clock, prefix: str, on: str | None, why: str | None) -> list[Event]:
    entity = _open_unit(state, prefix)
    return [_event(clock, "entity.blocked", Blocked(entity.id, on, why))]


def unblock(state: State, clock: Clock, prefix: str) -> list[Event]:
    entity = _open_unit(state, prefix)
    if entity.execution != "blocked":
        raise Invalid(f"{entity.id} is not blocked", code="wrong-state")
    return [_event(clock, "entity.unblocked", EntityWhy(entity.id))]


def retire(state: State, clock: Clock, prefix: str, why: str | None) -> list[Event]:
    entity = _open_unit(state, prefix)
    return [_event(clock, "entity.retired", EntityWhy(entity.id, why))]


def restore(state: State, clock: Clock, prefix: str, why: str | None) -> list[Event]:
    entity = find(state, prefix)
    if entity.execution not in ("done", "retired"):
        raise Invalid(f"{entity.id} is neither done nor retired; nothing to restore", code="wrong-state")
    return [_event(clock, "entity.restored", EntityWhy(entity.id, why))]


def done(
    state: State,
    clock: Clock,
    prefix: str,
    *,
    report: str | None = None,
    commit: str | None = None,
    artifact: str | None = None,
    why: str | None = None,
    head: str | None = None,
) -> list[Event]:
    """Done, gated by the completion rule; a report given here travels with the done;
    `head` is the linked checkout's commit as the work ends."""
    entity = find(state, prefix)
    events: list[Event] = []
    reports = list(state.reports.get(entity.id, ()))
    if report is not None or commit is not None or artifact is not None:
        added = report_added(entity.id, clock, report or "done", commit, artifact)
        events.append(added)
        reports.append(Report(added.id, clock.now, report or "done", commit, artifact))
    refused = completion.ruling(entity, reports, clock.now)
    if refused is not None:
        code, field, reason = refused
        raise Refused(reason, code=code, field=field or (), id=entity.id)
    return [*events, _event(clock, "entity.done", EntityWhy(entity.id, why, commit=head))]


def report(
    state: State, clock: Clock, prefix: str, text: str, commit: str | None, artifact: str | None
) -> list[Event]:
    entity = find(state, prefix)
    return [report_added(entity.id, clock, _text(text, "report"), commit, artifact)]


def report_added(work: str, clock: Clock, text: str, commit: str | None, artifact: str | None) -> Event:
    if commit is not None and not re.fullmatch(r"[0-9a-f]{7,64}", commit):
        raise Invalid(f"{commit!r} is not a commit sha (7-64 lowercase hex characters)", field="commit")
    payload = ReportAdded(text, work=work, commit=commit, artifact=artifact)
    return _event(clock, "report.added", payload, refs={"work": work})


def run_started(state: State, clock: Clock, prefix: str) -> list[Event]:
    entity = find(state, prefix)
    return [_event(clock, "work.run-started", RunStarted(entity.id))]


EXIT_CODES = range(-128, 256)  # 0-255 as a process returns it; -N: ended by signal N


def work_unit(state: State, prefix: str, verb: str) -> Entity:
    """The work unit `prefix` names; a `self work` verb on any other record is refused."""
    entity = find(state, prefix)
    if "work" not in entity.labels:
        kind = entity.labels[0] if entity.labels else "record without a label"
        raise Invalid(f"{prefix} is a {kind}, not a work unit", code="wrong-kind", verb=verb, id=prefix)
    return entity


def run_exited(state: State, clock: Clock, prefix: str, code: int) -> list[Event]:
    if code not in EXIT_CODES:
        raise Invalid(
            f"{{code}} {code}: an exit code is 0 to 255 (or -1 to -128: the signal that ended the process)",
            field="code",
        )
    entity = find(state, prefix)
    return [_event(clock, "work.run-exited", RunExited(entity.id, code))]


def _open_unit(state: State, prefix: str) -> Entity:
    entity = find(state, prefix)
    if not entity.live:
        state_word = entity.execution if entity.execution in ("done", "retired") else entity.status
        raise Invalid(f"{entity.id} is {state_word}", code="wrong-state", state=state_word)
    return entity


# --- projects (the workspace log) -----------------------------------------------------


def project_add(workspace: State, clock: Clock, slug: str, description: str | None) -> list[Event]:
    valid_slug(slug)
    if slug in workspace.projects:
        raise Invalid(f"project {slug!r} exists already", code="exists", field="slug")
    return [_event(clock, "project.added", ProjectAdded(slug, description))]


def project_archive(workspace: State, clock: Clock, slug: str, why: str) -> list[Event]:
    project = _project(workspace, slug)
    if project.archived:
        raise Invalid(f"project {slug!r} is already archived", code="wrong-state", field="slug")
    return [_event(clock, "project.archived", ProjectChanged(slug, _text(why, "why")))]


def project_restore(workspace: State, clock: Clock, slug: str) -> list[Event]:
    project = _project(workspace, slug)
    if not project.archived:
        raise Invalid(f"project {slug!r} is not archived", code="wrong-state", field="slug")
    return [_event(clock, "project.restored", ProjectChanged(slug))]


def _project(workspace: State, slug: str) -> Project:
    project = workspace.projects.get(slug)
    if project is None:
        raise Invalid(f"no project {slug!r}", code="not-found", field="slug")
    return project
