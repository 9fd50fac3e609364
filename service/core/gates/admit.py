"""Whether a posted event folds as written: the fold's own preconditions, judged on the state
before it is folded. An event the fold would only turn into a health signal (a record no one
made, a criterion never declared, a done without evidence) is refused instead, with the
problem naming its field. Pure.

`Post` carries what the events before it in the same post made, so a post may create a
record and then act on it, or report on a unit and then close it.

The one admission of events written from outside: `service/app/posting.py` runs every posted
event through `admit`, and the push gate (`adapters/sync/pushed.py: admit`) every event a push
appends, in log order, on the state before the push. What only a post is judged on stays with
the post: its ids (given or issued after the log's last; a push may carry ids written offline,
older than the log's last) and its log (a push's log is the path it is written to).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from service.core.commands.config import WorkspaceConfig
from service.core.errors import Invalid, ModelError, Refused
from service.core.events.events import (
    LEGACY_PREFIXES,
    VOUCHER,
    WRITABLE,
    Assertion,
    Covered,
    Event,
    LedgerFields,
    Payload,
    Placed,
    ProjectChanged,
    ReportAdded,
    Superseded,
    payload_of,
)
from service.core.fold.records import new_entity
from service.core.fold.state import LIVE_STATUSES, Entity, Report, State, kind_of
from service.core.gates import caps
from service.core.ledger import completion, ledger


class Post:
    """The records and reports the earlier events of one post made, and the workspace's
    settings (the retention caps). `events`: the whole batch, when known before its first
    event is judged (a push's): the records it places lower make room for a new one before
    them, as a command writes a record first and then the demotions that make its room."""

    def __init__(self, config: WorkspaceConfig, events: Sequence[Event] = ()) -> None:
        self.config = config
        self.created: set[str] = set()
        self.drafts: list[Entity] = []
        self.reports: dict[str, list[Report]] = {}
        self.placing = {p.entity for p in (_placed(e) for e in events) if p is not None}


def admit(state: State, event: Event, n: int, post: Post, *, imports: bool = False) -> None:
    """Refuse `event` (the `n`th of its post) when the fold would not apply it, or when it
    makes a record that a command would refuse to make (a retention cap, the ledger's rules).
    `imports`: history an import brought (its vouchers, its marks, legacy types) is taken, as
    from a workspace admin's push of an imported store."""
    where = f"events[{n}].payload"
    if imports and _imported(event):
        return
    if event.type not in WRITABLE:
        raise Refused(
            f"{{events[{n}].type}} {event.type!r} is not a type selfhub writes here (an import's "
            "voucher or another tool's history is written by an import alone)",
            field=f"events[{n}].type",
        )
    if completion.IMPORTED in (event.refs or {}):
        raise Refused(
            f"{{events[{n}].refs.{completion.IMPORTED}}} marks history an import brought over "
            "from another tool; an event written here is new history: leave it out",
            field=f"events[{n}].refs.{completion.IMPORTED}",
        )
    try:
        payload = payload_of(event)
    except msgspec.ValidationError as exc:
        raise Invalid(f"{{{where}}} does not fit {event.type}: {exc}", field=where) from None
    if payload is None:
        return
    if isinstance(payload, Assertion):
        _assertion(state, payload, where, post)
        if payload.text is not None:
            _new_record(state, event, payload, where, post)
    elif isinstance(payload, ReportAdded):
        _report(state, event, payload, where, post)
    elif isinstance(payload, ProjectChanged):
        if payload.name not in state.projects:
            raise Invalid(
                f"{{{where}.slug}} {payload.name!r} is no project", code="not-found", field=f"{where}.slug"
            )
    else:
        _on_record(state, event, payload, where, post)


def _imported(event: Event) -> bool:
    """History an import wrote: a voucher, a legacy type, or an event with the import mark
    (the fold reads each as the tool that wrote it did)."""
    return (
        event.type == VOUCHER
        or event.type.startswith(LEGACY_PREFIXES)
        or completion.IMPORTED in (event.refs or {})
    )


def _assertion(state: State, payload: Assertion, where: str, post: Post) -> None:
    known = payload.entity in state.entities or payload.entity in post.created
    if payload.text is None and not known:
        raise _unknown(payload.entity, f"{where}.entity")
    if payload.text is not None:
        if known:
            raise Invalid(
                f"{{{where}.entity}} {payload.entity} is a record already; leave `entity` out to make "
                "a new one",
                code="exists",
                field=f"{where}.entity",
            )
        post.created.add(payload.entity)


def _new_record(state: State, event: Event, payload: Assertion, where: str, post: Post) -> None:
    """The rules every new record passes as a command makes it: the ledger's for a claim,
    decision or question, and the retention cap of its tier."""
    text = payload.text or ""
    kind = kind_of(payload.labels)
    try:
        if kind is not None:
            ledger.check_record(
                state, payload.entity, kind, text, payload.ledger or LedgerFields(), payload.links
            )
        draft = new_entity(event, payload)  # as the fold will make it
        if event.type == "entity.confirmed":
            draft.status = "confirmed"
        demoted = [state.entities[i] for i in sorted(post.placing) if i in state.entities]
        if caps.reaches([draft], demoted):
            replaced = [state.entities[k.target] for k in draft.links if _superseded(state, k.type, k.target)]
            caps.check([*state.live(), *post.drafts], [draft], replaced, demoted, post.config)
    except caps.CapExceeded as exc:
        over = exc.template.split("; pass", 1)[0]
        raise Refused(
            f"{{{where}.exposure}}: {over}; post the record at a lower exposure, or make room first "
            "(a `place` command moves a record one tier down)",
            code=exc.code,
            field=f"{where}.exposure",
        ) from None
    except ModelError as exc:
        exc.fields = tuple(f"{where}.{f}" for f in exc.fields) or (where,)
        raise
    post.drafts.append(draft)


def _report(state: State, event: Event, payload: ReportAdded, where: str, post: Post) -> None:
    work = payload.work or (event.refs or {}).get("work")
    if isinstance(work, str):
        _record(state, work, f"{where}.work", post)
        report = Report(event.id, event.ts, payload.text, payload.commit, payload.artifact)
        post.reports.setdefault(work, []).append(report)


def _on_record(state: State, event: Event, payload: Payload, where: str, post: Post) -> None:
    entity_id = getattr(payload, "entity", None)
    if not isinstance(entity_id, str):
        return
    entity = _record(state, entity_id, f"{where}.entity", post)
    if entity is None:  # made earlier in this post: the fold judges the rest
        return
    if isinstance(payload, Covered) and payload.criterion not in entity.criteria:
        raise Invalid(
            f"{{{where}.criterion}} {payload.criterion!r} is not a criterion {entity.id} declares",
            field=f"{where}.criterion",
        )
    if isinstance(payload, Superseded) and entity.status not in LIVE_STATUSES:
        raise Invalid(f"{entity.id} is {entity.status}: only a live record is superseded", code="wrong-state")
    if event.type == "entity.done":
        _done(state, event, payload, entity, where, post)


def _done(state: State, event: Event, payload: Payload, entity: Entity, where: str, post: Post) -> None:
    reports = [*state.reports.get(entity.id, ()), *post.reports.get(entity.id, ())]
    done_report = getattr(payload, "report", None)
    if done_report:
        reports.append(Report(event.id, event.ts, done_report))
    judged = completion.imported_from_superself(event)
    found = completion.ruling(entity, reports, event.ts, judged=judged)
    if found is not None:
        code, field, message = found
        raise Refused(message, code=code, field=f"{where}.{field}" if field else where)


def _record(state: State, entity_id: str, field: str, post: Post) -> Entity | None:
    """The record `entity_id` names (None: one made earlier in this post); not-found else."""
    entity = state.entities.get(entity_id)
    if entity is None and entity_id not in post.created:
        raise _unknown(entity_id, field)
    return entity


def _unknown(entity_id: str, field: str) -> Invalid:
    return Invalid(f"{{{field}}} {entity_id} is no record of this log", code="not-found", field=field)


def _placed(event: Event) -> Placed | None:
    if event.type != "entity.placed":
        return None
    try:
        payload = payload_of(event)
    except msgspec.ValidationError:
        return None
    return payload if isinstance(payload, Placed) else None


def _superseded(state: State, kind: str, target: str) -> bool:
    """Whether a new record's link takes the place of a live record (the fold retires it)."""
    return kind == "supersedes" and target in state.entities and state.entities[target].live
