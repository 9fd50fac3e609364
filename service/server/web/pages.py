"""The documents the view's pages render, each made by one call from the read documents the
API answers (`service/server/api/reads.py`: status, context, state rows, a record with its history):
arranged for a person to read, never computed anew. The templates only lay them out.

A page costs what it shows, not the size of the log: the rows of `state list --json` are made
only for the records a page shows — the records table's page of `PAGE_ROWS`, the project page's
first `GROUP_ROWS` of each list, a record's relations — with short ids unique among every
record (`render.shorts_for`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import msgspec

from service.server.api import reads
from service.server.web import actions, inbox

if TYPE_CHECKING:
    from service.app.workspace import Workspace
    from service.core.fold.state import Entity, State

Row = dict[str, Any]  # a row of `self state list --json`, as `GET …/state` answers it
PAGE_ROWS = 100  # rows of the records table one page shows
GROUP_ROWS = 25  # rows of each list of the project page: the records table has them all

# The project page's groups: (key, title, label), in the order a person reads them.
GROUPS = (
    ("goals", "Goals", "goal"),
    ("objectives", "Objectives", "objective"),
    ("milestones", "Milestones", "milestone"),
    ("conventions", "Conventions", "convention"),
    ("decisions", "Decisions", "decision"),
    ("claims", "Claims", "claim"),
    ("questions", "Questions", "question"),
)
IN_PROGRESS = ("in-progress", "blocked")
# A record's relations to other records of its log, as its row names them: (key, heading).
RELATIONS = (
    ("supersedes", "Supersedes"),
    ("superseded_by", "Superseded by"),
    ("supports", "Supported by"),
    ("blocked_by", "Blocked by"),
    ("depends_on", "Depends on"),
    ("answers", "Answers"),
    ("resolved_by", "Resolved by"),
)  # a record named by two of them is listed under the first (a blocker, not also a dependency)


class Group(msgspec.Struct, frozen=True):
    key: str
    title: str
    label: str
    rows: list[Row]  # the first GROUP_ROWS
    total: int


class Waiting(msgspec.Struct, frozen=True, kw_only=True):
    """A row of a person's inbox: a record, why it waits on a person, and what the page offers
    to answer it (confirm or decline a proposal, review what a record owes)."""

    row: Row
    reasons: list[str]
    proposal: bool  # the record or a placement of it waits for a person's confirm or decline
    review: bool  # it owes a review


class ProjectPage(msgspec.Struct, frozen=True):
    """A project's page: its context's header, `self status --json`, its live records by kind,
    the work in progress and what waits on a person (the inbox: every record the status names
    as waiting, owing a review, standing on nothing or blocked, once each)."""

    project: str
    description: str | None
    today: str
    status: dict[str, Any]
    groups: list[Group]
    progress: list[Row]  # the first GROUP_ROWS, as each list of the page
    progress_total: int
    waiting: list[Waiting]  # the first GROUP_ROWS
    waiting_total: int
    overdue: list[str]  # ids of records past their target
    blockers: dict[str, list[str]]  # a blocked record's id → the texts of what blocks it


def state_of(record: Entity) -> str:
    """One word for where a record stands: its execution when it has one, else its status."""
    return str(record.execution or record.status)


def project(view: Workspace) -> ProjectPage:
    """Rows are made only for the records the page shows (GROUP_ROWS of each list)."""
    from service.core.projections.views import is_waiting, list_rows

    context = reads.context_doc(view)
    status = msgspec.to_builtins(view.status())
    state = view.state(view.require_project())
    live = list_rows(state, False)
    now = view.now()
    listed = {key: {line["record"] for line in status[key]} for key in LEDGER_LINES}
    waiting = [e for e in live if is_waiting(e, now)]
    seen = {e.id for e in waiting}
    waiting += [e for e in ordered_of(state, set().union(*listed.values())) if e.id not in seen]
    progress = [e for e in live if "work" in e.labels and e.execution in IN_PROGRESS]
    grouped = [(key, title, label, [e for e in live if label in e.labels]) for key, title, label in GROUPS]
    shown = [*waiting[:GROUP_ROWS], *progress[:GROUP_ROWS]]
    shown += [e for *_, records in grouped for e in records[:GROUP_ROWS]]
    row = _rows(state, shown)
    groups = [
        Group(key, title, label, [row[e.id] for e in records[:GROUP_ROWS]], len(records))
        for key, title, label, records in grouped
    ]
    overdue = [d["entity"] for d in status["overdue"]]
    return ProjectPage(
        context.project,
        context.description,
        context.today,
        status,
        groups,
        [row[e.id] for e in progress[:GROUP_ROWS]],
        len(progress),
        [
            _waiting(state, e, row[e.id], [k for k, ids in listed.items() if e.id in ids], now)
            for e in waiting[:GROUP_ROWS]
        ],
        len(waiting),
        overdue,
        blockers(state, row.values()),
    )


LEDGER_LINES = ("review_owed", "unsupported", "blocked")  # the status's lists of records a person looks at


def ordered_of(state: State, ids: Iterable[str]) -> list[Entity]:
    """The records of `ids` in `self state list` order."""
    from service.core.projections.views import ordered

    return ordered([state.entities[i] for i in ids if i in state.entities])


def _waiting(state: State, record: Entity, row: Row, listed: list[str], now: str) -> Waiting:
    """An inbox row: why `record` waits (`listed`: the status's lists that name it) and which
    answers the page offers."""
    from service.core.projections.views import is_waiting

    waits = is_waiting(record, now)
    return Waiting(
        row=row,
        reasons=inbox.reasons(state, record, row, listed),
        proposal=waits and (record.status == "proposed" or bool(record.pending)),
        review="review_owed" in listed,
    )


def _rows(state: State, records: Iterable[Entity]) -> dict[str, Row]:
    """The `self state list --json` row of each of `records` (id → row), its short id unique
    among every record of `state`: the cost of the rows shown, not of the log."""
    from service.core.projections import render, views

    chosen = {e.id: e for e in records}
    shorts = render.shorts_for(chosen, state.entities)
    extras = views.ledger_extras(state, chosen)
    return {i: views.entity_row(e, shorts[i], extras.get(i)) for i, e in chosen.items()}


def blockers(state: State, rows: Iterable[Row]) -> dict[str, list[str]]:
    """The texts of what blocks each blocked row's record (id → texts), for its badge."""
    return {row["id"]: inbox.blockers(state, row) for row in rows if row.get("blocked_by")}


class Filter(msgspec.Struct, frozen=True):
    """The records table's filter, as its form sends it: a label, a state word, words of the
    text (all of them, any case), every record or only live ones; and which page of
    PAGE_ROWS rows."""

    label: str = ""
    state: str = ""
    text: str = ""
    all: bool = False
    page: int = 1

    def query(self, page: int) -> str:
        """The table's query string for `page` of this filter (the values it was given)."""
        given = {"label": self.label, "state": self.state, "text": self.text, "all": "1" if self.all else ""}
        return urlencode([(k, v) for k, v in given.items() if v] + [("page", str(page))])

    def keeps(self, record: Entity) -> bool:
        if self.label and self.label not in record.labels:
            return False
        if self.state and state_of(record) != self.state:
            return False
        seen = " ".join(v or "" for v in (record.id, record.text, record.why)).casefold()
        return all(word in seen for word in self.text.casefold().split())


class Table(msgspec.Struct, frozen=True):
    filter: Filter
    rows: list[Row]  # the page's
    matched: int  # records the filter keeps
    total: int  # records before the filter
    labels: list[str]  # every label and state word among them, for the filter's choices
    states: list[str]
    page: int  # the page shown, within 1..pages
    pages: int
    first: int  # the place of the page's first row among those matched (from 1)
    previous: str | None  # the query strings of the pages before and after it
    next: str | None
    blockers: dict[str, list[str]]  # a blocked record's id → the texts of what blocks it


def table(view: Workspace, chosen: Filter) -> Table:
    """One page of the records the filter keeps, in `self state list` order."""
    from service.core.projections.views import list_rows

    state = view.state(view.require_project())
    records = list_rows(state, chosen.all)
    labels = sorted({label for e in records for label in e.labels})
    states = sorted({state_of(e) for e in records})
    kept = [e for e in records if chosen.keeps(e)]
    pages = max(1, -(-len(kept) // PAGE_ROWS))
    page = min(max(chosen.page, 1), pages)
    start = (page - 1) * PAGE_ROWS
    shown = kept[start : start + PAGE_ROWS]
    rows = _rows(state, shown)
    return Table(
        chosen,
        [rows[e.id] for e in shown],
        len(kept),
        len(records),
        labels,
        states,
        page,
        pages,
        start + 1,
        chosen.query(page - 1) if page > 1 else None,
        chosen.query(page + 1) if page < pages else None,
        blockers(state, rows.values()),
    )


class Relation(msgspec.Struct, frozen=True):
    key: str
    title: str
    ids: list[str]


class RecordPage(msgspec.Struct, frozen=True):
    """One record as `self state show ID --json --history` shows it, its relations to other
    records of its log (both ways) and a short line for each record named."""

    record: Row
    history: list[dict[str, Any]]
    relations: list[Relation]
    cited_by: list[str]
    named: dict[str, Row]  # id → that record's row
    actions: list[str]  # what a writer may do to it here (`actions.offered`)
    blockers: dict[str, list[str]]  # a blocked record's id (its own, those named) → what blocks it


def record(view: Workspace, prefix: str) -> RecordPage:
    """Rows are made only for the records the page names."""
    from service.core.projections.views import ordered

    shown = reads.shown(view, prefix, True)
    history = shown.pop("history")
    state = view.state(view.require_project())
    listed: set[str] = set()
    relations = []
    for key, title in (*RELATIONS, ("links", "Linked")):
        given = [link["target"] for link in shown["links"]] if key == "links" else _ids(shown.get(key))
        ids = [i for i in dict.fromkeys(given) if i not in listed]
        listed.update(ids)
        if ids:
            relations.append(Relation(key, title, ids))
    citing = [e for e in state.entities.values() if e.id != shown["id"] and _cites(state, e, shown["id"])]
    cited = [e.id for e in ordered(citing)]
    named = [i for rel in relations for i in rel.ids if i in state.entities] + cited
    rows = _rows(state, (state.entities[i] for i in named))
    named_rows = {i: rows[i] for i in named}
    blocked = blockers(state, [shown, *named_rows.values()])
    return RecordPage(shown, history, relations, cited, named_rows, actions.offered(shown), blocked)


def _ids(value: object) -> list[str]:
    """The ids a relation holds: one id, a list of them, or `supports`' list of AND sets."""
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return [i for v in value for i in _ids(v)]
    return [str(value)]


def _cites(state: State, record: Entity, target: str) -> bool:
    """Whether `record` names `target`: a link, or its ledger relations (as its row lists
    them: `depends_on`, `answers`, `supports`)."""
    if any(link.target == target for link in record.links):
        return True
    fact = state.ledger.get(record.id)
    return fact is not None and (
        target in fact.depends_on or target in fact.answers or any(target in group for group in fact.supports)
    )
