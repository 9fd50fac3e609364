"""The reads a front end makes: one function per read, each returning the document its `--json`
prints (a msgspec Struct where the shape is fixed, rows as the model builds them where a
ledger record adds its own keys), and the text renders of those documents.

Projections stay in the model (`service/core/projections/views.py`, `context.py`, `status.py`, …); the
wiring (`service/app/workspace.py`) gathers their input. Every import is deferred: `self context`
stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from collections.abc import Mapping

    from service.app.workspace import Workspace
    from service.core.events.events import Event
    from service.core.fold.state import Entity, State
    from service.core.projections.context import ContextDoc, Draft
    from service.core.projections.overview import OverviewDoc
    from service.core.projections.status import StatusDoc

Row = dict[str, Any]  # a record's row: fixed keys, and a ledger record's derived keys beside them


class Context(msgspec.Struct, frozen=True):
    """What `self context` renders: the document (a project's made row by row as it is read),
    and the budget the agent reads within."""

    doc: Draft | OverviewDoc
    budget: int
    per_char: float

    def of_project(self) -> bool:
        """Whether this is a project's context (else the workspace overview)."""
        from service.core.projections.context import Draft

        return isinstance(self.doc, Draft)

    def fitted(self) -> ContextDoc | OverviewDoc:
        """The document `--json` prints: a project's context fitted to the budget."""
        from service.core.projections.context import Draft

        if isinstance(self.doc, Draft):
            return self.doc.fitted(self.budget, self.per_char)
        return self.doc


def budget(given: int | None) -> int | None:
    """`given` when the agent render can keep to it (or none was given), else Invalid."""
    from service.core.projections.context import check_budget

    return given if given is None else check_budget(given)


def context(ws: Workspace, given: int | None) -> Context:
    """Bounded context of the workspace's project; outside a project, the workspace overview."""
    budget(given)
    config = ws.config()
    doc = ws.context() if ws.project else ws.overview()
    return Context(doc, given if given is not None else config.context_budget, config.tokens_per_char)


def status(ws: Workspace) -> StatusDoc | OverviewDoc:
    """Derived live state of the project; outside a project, the workspace overview."""
    return ws.status() if ws.project else ws.overview()


class Hits(msgspec.Struct, frozen=True):
    """`self search`: the rows found, and each one's list line (its project first)."""

    rows: list[Row]
    lines: list[str]
    hidden: int = 0  # matches left out because context shows them


def search(ws: Workspace, query: str, all_: bool, exposure: str | None) -> Hits:
    from service.core.projections import views

    hits = ws.search(query, all_, exposure)
    shorts = views.short_ids(e.id for e in hits)
    extras = ws.ledger_extras(hits)
    rows = [views.entity_row(e, shorts[e.id], extras.get(e.id)) for e in hits]
    lines = [views.list_line(e, shorts[e.id], extras.get(e.id)) for e in hits]
    shown = [f"{e.project or '(workspace)'}  {line}" for e, line in zip(hits, lines, strict=True)]
    return Hits(rows, shown, ws.search_hidden(query, all_, exposure))


class Records:
    """`self state list`: the rows listed, and each one's list line (made when asked)."""

    def __init__(self, state: State, listed: list[Entity]) -> None:
        from service.core.projections import views

        self._listed = listed
        self._shorts = views.short_ids(state.entities)
        self._extras = views.ledger_extras(state)
        self.rows: list[Row] = [
            views.entity_row(e, self._shorts[e.id], self._extras.get(e.id)) for e in listed
        ]

    @property
    def lines(self) -> list[str]:
        from service.core.projections import views

        shorts, extras = self._shorts, self._extras
        return [views.list_line(e, shorts[e.id], extras.get(e.id), shorts) for e in self._listed]


def records(ws: Workspace, all_: bool, label: str | None = None, at: str | None = None) -> Records:
    """The project's live records (every record with `all_`), folded up to `at` when given."""
    from service.core.projections import views

    log = ws.require_project()
    state = ws.state_at(log, at) if at is not None else ws.state(log)
    return Records(state, [e for e in views.list_rows(state, all_) if label is None or label in e.labels])


class Record:
    """`self state show`: one record's row, its own events when asked, and its text (made
    when asked)."""

    def __init__(
        self,
        entity: Entity,
        events: list[Event],
        extra: dict[str, object] | None,
        history: bool,
        relayed: Mapping[str, str] | None = None,
    ):
        from service.core.projections import views

        self._entity, self._extra = entity, extra
        self.row: Row = views.entity_row(entity, entity.id, extra)
        self._events = [event_row(e, relayed) for e in events]  # none unless the history was asked for
        self.history: list[Row] | None = self._events if history else None

    def document(self) -> Row:
        return self.row if self.history is None else {**self.row, "history": self.history}

    @property
    def text(self) -> str:
        from service.app.authors import byline
        from service.core.projections import views

        lines = [views.show_text(self._entity, extra=self._extra)]
        lines += [
            f"  {r['id']}  {r['ts']}  {byline(r)}  {r['type']}  {event_subject(r, full=True)}"
            for r in self._events
        ]
        return "\n".join(lines)


def record(ws: Workspace, prefix: str, history: bool, at: str | None) -> Record:
    entity, events, extra = ws.show(prefix, history, at)
    return Record(entity, events, extra, history, ws.store.local.pushers() if events else None)


def recent(ws: Workspace, n: int) -> list[Row]:
    """The project's `n` most recent events (the workspace log's outside a project), newest last;
    a pushed one with who pushed it where that is not its claimed author (`authors.py`)."""
    relayed = ws.store.local.pushers()
    return [event_row(e, relayed) for e in ws.recent(n)]


def event_row(event: Any, relayed: Mapping[str, str] | None = None) -> Row:
    from service.app import authors

    return authors.row(event, relayed or {})


def event_subject(row: Row, full: bool = False) -> str:
    """A short description of what an event (`event_row`) is about, for listings."""
    payload = row.get("payload")
    if not isinstance(payload, dict):
        return ""
    parts = [str(payload[k]) for k in ("entity", "work", "slug") if k in payload]
    text = payload.get("text") or payload.get("why") or payload.get("criterion")
    if text:
        text = str(text)
        parts.append(text if full or len(text) <= 60 else text[:57] + "...")
    return "  ".join(parts)


class Quarantined(msgspec.Struct, frozen=True):
    file: str
    line: int
    reason: str


class LogFold(msgspec.Struct, frozen=True):
    log: str
    events: int
    entities: int
    unknown: int
    signals: list[str]
    quarantined: list[Quarantined]


class FoldReport(msgspec.Struct, frozen=True):
    """`self fold`: what each log holds, folded from nothing."""

    logs: list[LogFold]


def refold(ws: Workspace) -> FoldReport:
    return msgspec.convert(ws.refold(), FoldReport)


class Criterion(msgspec.Struct, frozen=True):
    criterion: str
    covered: bool


class ReportRow(msgspec.Struct, frozen=True):
    id: str
    ts: str
    text: str
    commit: str | None
    artifact: str | None
    notes: list[str]


class Evidence(msgspec.Struct, frozen=True):
    """The completion gate's judgement now: done, ready, or refused (and why)."""

    judgement: str
    refusal: str | None


class RunRow(msgspec.Struct, frozen=True):
    """A unit's process: what the log says of it, and its liveness on this machine."""

    work: str
    started: str | None
    exited: str | None
    code: int | None
    local: str | None


class WorkShow(msgspec.Struct, frozen=True):
    """`self work show`: one unit's recovery line."""

    id: str
    short: str
    project: str
    outcome: str
    labels: list[str]
    status: str
    execution: str | None
    blocked_on: str | None
    closed_why: str | None
    criteria: list[Criterion]
    parents: list[str]
    members: list[str]
    reports: list[ReportRow]
    evidence: Evidence
    runs: list[RunRow]


def work_show(ws: Workspace, prefix: str) -> WorkShow:
    return msgspec.convert(ws.work_show(prefix), WorkShow)


class LinkRow(msgspec.Struct, frozen=True, omit_defaults=True):
    """A typed link; `set` numbers the AND set a ground belongs to, when it is one of several."""

    type: str
    target: str
    set: int | None = None


class RecordRow(msgspec.Struct, frozen=True):
    """The fields every record's row has (`self state list --json`); a ledger record's row
    adds its own keys after them, a work unit's its word."""

    id: str
    short: str
    project: str
    labels: list[str]
    text: str
    why: str | None
    status: str
    execution: str | None
    exposure: str
    priority: int | None
    scope: str
    target: str | None
    criteria: list[str]
    covered: list[str]
    blocked_on: str | None
    superseded_by: str | None
    supersedes: list[str]
    links: list[LinkRow]
    pending: bool
    created: str
    updated: str


class WorkRow(RecordRow, frozen=True):
    """A work unit's row (`self work list --json`): a record's row and the unit's word."""

    word: str


class WorkList(msgspec.Struct, frozen=True):
    """`self work list`: the units listed, how many are open and done, and whether all were asked."""

    units: list[WorkRow]
    open: int
    done: int
    all: bool


def work_list(ws: Workspace, all_: bool) -> WorkList:
    return msgspec.convert(ws.work_list(all_), WorkList)


class Outcome(msgspec.Struct, frozen=True):
    """`self work outcome`: intended outcomes against the files the unit's commits changed."""

    work: str
    start: str
    end: str
    done: bool
    intended: list[str]
    realized: list[str]
    intentional: list[str]
    unintentional: list[str]
    unrealized: list[str]


def work_outcome(ws: Workspace, prefix: str) -> Outcome:
    return msgspec.convert(ws.work_outcome(prefix), Outcome)


class Answer(msgspec.Struct, frozen=True):
    answer: str
    action: Any


class QuestionCheck(msgspec.Struct, frozen=True):
    """`self question check`: whether any answer changes the action."""

    question: str
    text: str
    moot: bool
    changes_action: bool
    options: list[Answer]
    actions: int


def question_check(ws: Workspace, prefix: str) -> QuestionCheck:
    from service.core.ledger import ledger

    return msgspec.convert(ledger.check_question(ws.state(ws.log_of(prefix)), prefix), QuestionCheck)


class Conflict(msgspec.Struct, frozen=True):
    """`writer` writes `path`, which `other` reads or writes as `other_path`."""

    writer: str
    other: str
    path: str
    other_path: str
    kind: str


class Parallel(msgspec.Struct, frozen=True):
    """`self work parallel`: whether the units commute, else what conflicts."""

    units: list[str]
    commute: bool
    conflicts: list[Conflict]
    undeclared: list[str]


def parallel(ws: Workspace, units: list[str]) -> Parallel:
    from service.core.ledger import worksets

    return msgspec.convert(worksets.parallel(ws.state(ws.require_project()), units), Parallel)


def jsonschema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the event envelope and of each ledger record."""
    from service.core.events.schema import document

    return document()
