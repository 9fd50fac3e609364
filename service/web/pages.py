"""The documents the view's pages render, each made by one call from the read documents the
API answers (`service/api/reads.py`: status, context, state rows, a record with its history):
arranged for a person to read, never computed anew. The templates only lay them out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from service.api import reads

if TYPE_CHECKING:
    from service.workspace import Workspace

Row = dict[str, Any]  # a row of `self state list --json`, as `GET …/state` answers it

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
    ("depends_on", "Depends on"),
    ("answers", "Answers"),
    ("resolved_by", "Resolved by"),
    ("blocked_by", "Blocked by"),
)


class Group(msgspec.Struct, frozen=True):
    key: str
    title: str
    rows: list[Row]


class ProjectPage(msgspec.Struct, frozen=True):
    """A project's page: its context's header, `self status --json`, its live records by kind,
    the work in progress and what waits on a person."""

    project: str
    description: str | None
    today: str
    status: dict[str, Any]
    groups: list[Group]
    progress: list[Row]
    waiting: list[Row]
    overdue: list[str]  # ids of records past their target


def state_of(row: Row) -> str:
    """One word for where a record stands: its execution when it has one, else its status."""
    return str(row["execution"] or row["status"])


def project(view: Workspace) -> ProjectPage:
    from service.model.views import is_waiting

    context = reads.context_doc(view)
    status = msgspec.to_builtins(view.status())
    rows = reads.rows(view, False)
    live = view.state(view.require_project()).entities
    now = view.now()
    waiting = [r for r in rows if is_waiting(live[r["id"]], now)]
    progress = [r for r in rows if "work" in r["labels"] and r["execution"] in IN_PROGRESS]
    groups = [Group(key, title, [r for r in rows if label in r["labels"]]) for key, title, label in GROUPS]
    overdue = [d["entity"] for d in status["overdue"]]
    return ProjectPage(
        context.project, context.description, context.today, status, groups, progress, waiting, overdue
    )


class Filter(msgspec.Struct, frozen=True):
    """The records table's filter, as its form sends it: a label, a state word, words of the
    text (all of them, any case), every record or only live ones."""

    label: str = ""
    state: str = ""
    text: str = ""
    all: bool = False

    def keeps(self, row: Row) -> bool:
        if self.label and self.label not in row["labels"]:
            return False
        if self.state and state_of(row) != self.state:
            return False
        seen = " ".join(str(row[k] or "") for k in ("id", "text", "why")).casefold()
        return all(word in seen for word in self.text.casefold().split())


class Table(msgspec.Struct, frozen=True):
    filter: Filter
    rows: list[Row]
    total: int  # rows before the filter
    labels: list[str]  # every label and state word among them, for the filter's choices
    states: list[str]


def table(view: Workspace, chosen: Filter) -> Table:
    rows = reads.rows(view, chosen.all)
    labels = sorted({label for r in rows for label in r["labels"]})
    states = sorted({state_of(r) for r in rows})
    return Table(chosen, [r for r in rows if chosen.keeps(r)], len(rows), labels, states)


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


def record(view: Workspace, prefix: str) -> RecordPage:
    shown = reads.shown(view, prefix, True)
    history = shown.pop("history")
    others = {r["id"]: r for r in reads.rows(view, True)}
    relations = [Relation(k, t, ids) for k, t in RELATIONS if (ids := _ids(shown.get(k)))]
    links = [link["target"] for link in shown["links"] if link["type"] not in ("supersedes", "supports")]
    if links:
        relations.append(Relation("links", "Linked", links))
    cited = [r["id"] for r in others.values() if r["id"] != shown["id"] and _cites(r, shown["id"])]
    named = {i: others[i] for rel in relations for i in rel.ids if i in others} | {
        i: others[i] for i in cited
    }
    return RecordPage(shown, history, relations, cited, named)


def _ids(value: object) -> list[str]:
    """The ids a relation holds: one id, a list of them, or `supports`' list of AND sets."""
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return [i for v in value for i in _ids(v)]
    return [str(value)]


def _cites(row: Row, target: str) -> bool:
    return any(link["target"] == target for link in row["links"]) or any(
        target in _ids(row.get(k)) for k in ("depends_on", "answers", "supports")
    )
