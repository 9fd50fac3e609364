"""The folded state: one entity shape for every record, plus reports, runs and projects."""

from __future__ import annotations

import msgspec

from service.core.events.events import (
    LEDGER_STATES,
    Execution,
    Exposure,
    LedgerFields,
    Link,
    ReviewMark,
    Status,
)

LIVE_STATUSES: tuple[Status, ...] = ("proposed", "confirmed")
CLOSED_EXECUTIONS: tuple[Execution, ...] = ("done", "retired")
# Ledger records: the label that makes an entity a claim, decision or question, and the
# state each is recorded in when none is given.
DEFAULT_STATES: dict[str, str] = {kind: states[0] for kind, states in LEDGER_STATES.items()}
RELATIONS = ("supports", "depends-on", "answers")


def kind_of(labels: list[str] | tuple[str, ...]) -> str | None:
    """claim, decision or question: the first ledger label among `labels`, else None."""
    for label in labels:
        if label in DEFAULT_STATES:
            return label
    return None


def shared_with(project: str, entity: Entity) -> bool:
    """Whether a live record of another project's log renders in `project`'s context: it is
    workspace-scoped, or its scope names `project` (Superself's scope naming a project)."""
    return entity.live and entity.scope in ("workspace", project)


class Pending(msgspec.Struct, gc=False):
    """A placement proposed by an agent, waiting on a person to confirm it."""

    event: str
    exposure: Exposure | None = None
    priority: int | None = None
    scope: str | None = None
    why: str | None = None
    pair: str | None = None


class Undo(msgspec.Struct, gc=False, omit_defaults=True):
    """What a record's last undoable transition changed (a withdrawal, a supersession, a
    retirement, a link added), so an `entity.restored` whose `refs.annuls` names that event —
    Superself's `self undo` — puts it back. One per record: the transitions Superself's undo
    takes back end the record's status or working state, so each is its last of that kind."""

    event: str
    status: Status | None = None  # before a withdrawal or a supersession
    execution: Execution | None = None  # before a retirement
    closed_why: str | None = None
    superseded_by: str | None = None
    link: Link | None = None  # the edge a link event added


class Entity(msgspec.Struct, gc=False):
    """One record. Mutable only while the fold builds it; projections only read it."""

    id: str
    project: str
    text: str
    labels: list[str]
    links: list[Link]
    criteria: list[str]
    covered: list[str]
    exposure: Exposure
    priority: int | None
    scope: str
    status: Status
    created: str
    updated: str
    actor: str = "agent"
    target: str | None = None
    why: str | None = None
    execution: Execution | None = None
    started: bool = False
    blocked_on: str | None = None
    blocked_why: str | None = None  # the reason the last block gave (read while blocked)
    superseded_by: str | None = None
    closed_why: str | None = None
    pending: list[Pending] = msgspec.field(default_factory=list)
    ledger: LedgerFields | None = None
    undo: Undo | None = None
    confirmed_once: bool = False  # confirmed at some point, whatever its status now
    proposed_at: str | None = None  # a record made as a proposal: its creating event's ts
    expires: str | None = None  # the date a work proposal said it lapses (Superself's --expires)

    @property
    def live(self) -> bool:
        return self.status in LIVE_STATUSES and self.execution not in CLOSED_EXECUTIONS

    @property
    def supersedes(self) -> list[str]:
        return [link.target for link in self.links if link.type == "supersedes"]


class Fact(msgspec.Struct, gc=False, array_like=True):
    """What the ledger's derived views read of one claim, decision or question.

    The fold keeps one per ledger record in `State.ledger`, beside the entities, so the
    derived views (`service.core.ledger.derived`) need no record text and come out the same from a
    hot slice of the state as from the whole of it.
    """

    kind: str
    state: str
    changed: str
    current: bool = True
    retracted: bool = False
    superseded_by: str | None = None
    reason: str | None = None
    supports: tuple[tuple[str, ...], ...] = ()
    depends_on: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()
    applies_to: tuple[str, ...] = ()  # the record's --scope
    reviewed: tuple[ReviewMark, ...] = ()


class Report(msgspec.Struct, frozen=True, gc=False):
    """A report on a work unit; `notes` is evidence that is not a commit (a checksum, a
    reviewer), and a Superself report's further commits."""

    id: str
    ts: str
    text: str
    commit: str | None = None
    artifact: str | None = None
    notes: tuple[str, ...] = ()


class Run(msgspec.Struct, gc=False):
    """What the synced log says of a work unit's process: started, and exited with a code."""

    started: str
    exited: str | None = None
    code: int | None = None


class Project(msgspec.Struct, gc=False):
    slug: str
    added: str
    description: str | None = None
    archived: bool = False
    why: str | None = None


class Signal(msgspec.Struct, frozen=True, gc=False):
    """A health signal: something in the log the fold could not apply as written."""

    kind: str
    event: str
    detail: str
    entity: str | None = None


class State(msgspec.Struct, gc=False):
    entities: dict[str, Entity] = msgspec.field(default_factory=dict)
    reports: dict[str, list[Report]] = msgspec.field(default_factory=dict)
    runs: dict[str, Run] = msgspec.field(default_factory=dict)
    projects: dict[str, Project] = msgspec.field(default_factory=dict)
    signals: list[Signal] = msgspec.field(default_factory=list)
    pairs: dict[str, list[str]] = msgspec.field(default_factory=dict)
    # legacy Superself criteria by id, per record: a milestone's exit criteria (c1, …) and a
    # work unit's requirements (r1, …) → their current text
    exits: dict[str, dict[str, str]] = msgspec.field(default_factory=dict)
    ledger: dict[str, Fact] = msgspec.field(default_factory=dict)
    awaiting: dict[str, list[str]] = msgspec.field(default_factory=dict)
    annulled: list[str] = msgspec.field(default_factory=list)  # annulled before they were folded
    # imported dones an import vouched for → the voucher (`import.superself`) that named it
    # first; a map, so a fold of thousands of imported closes looks each one up at once
    vouched: dict[str, str] = msgspec.field(default_factory=dict)
    unknown: int = 0
    events: int = 0
    last_id: str | None = None

    def live(self) -> list[Entity]:
        return [e for e in self.entities.values() if e.live]
