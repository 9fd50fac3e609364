"""The bodies the service answers, as msgspec structs for its OpenAPI document (`/schema`).

The handlers answer bytes (`reads`: the CLI's JSON, byte for byte); these structs describe
those bytes, key for key. `tests/e2e/test_api_schema.py` decodes real answers into them with
unknown keys forbidden, so a key added to an answer and not here fails there. Where the read
already has a struct (`ContextDoc`, `StatusDoc`), the document names it.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from service.app.queries import RecordRow


class Doc(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What every documented body shares: no key beyond its fields."""


class Problem(Doc, frozen=True):
    """An RFC 9457 problem document (`application/problem+json`): every error's answer. `code`
    is the stable name of the error (`service/core/problems.py`), `field` the input it is about."""

    type: str
    title: str
    status: int
    detail: str | None = None
    code: str | None = None
    field: str | None = None


class Health(Doc, frozen=True):
    status: Literal["ok", "ready"]


class ProjectRow(Doc, frozen=True):
    """One project of `self project list --json`."""

    slug: str
    description: str | None
    archived: bool
    added: str


class Owed(Doc, frozen=True):
    ground: str
    head: str
    reason: str
    as_of: str


class Lost(Doc, frozen=True):
    ground: str
    reason: str
    head: str | None = None


class Evidence(Doc, frozen=True):
    ref: str
    checked_at: str | None = None
    commit: str | None = None


class Option(Doc, frozen=True):
    answer: str
    action: str


class EntityRow(RecordRow, frozen=True, forbid_unknown_fields=True):
    """One record's row (`self state list --json`). A claim, decision or question adds the
    ledger's keys, from `kind` on: its derived views and its recorded fields."""

    kind: str | None = None
    state: str | None = None
    current: bool | None = None
    support: str | None = None
    review_owed: list[Owed] | None = None
    lost: list[Lost] | None = None
    blocked: bool | None = None
    blocked_by: list[str] | None = None
    applicable: bool | None = None
    resolved: bool | None = None
    resolved_by: list[str] | None = None
    choice: str | None = None
    alternatives: list[str] | None = None
    decided_by: str | None = None
    supports: list[list[str]] | None = None
    depends_on: list[str] | None = None
    answers: list[str] | None = None
    supersede_reason: str | None = None
    applies_to: list[str] | None = None
    rationale: str | None = None
    evidence: list[str | Evidence] | None = None
    revisit: str | None = None
    cost_if_wrong: str | None = None
    pinned: bool | None = None
    alias: str | None = None
    source: str | None = None
    options: list[Option] | None = None
    moot: bool | None = None


class Origin(Doc, frozen=True):
    actor: Literal["agent", "human"]
    confirmed: bool
    session: str | None = None
    by: str | None = None  # the authenticated user that wrote it


class Event(Doc, frozen=True):
    """An event of a log, as `--json` prints it: the envelope, its payload decoded."""

    id: str
    ts: str
    type: str
    origin: Origin
    project: str
    payload: dict[str, Any]
    refs: dict[str, Any] | None = None


class Shown(EntityRow, frozen=True):
    """One record (`self state show --json`), with its own events unless `history=0`."""

    history: list[Event] | None = None


class Written(Doc, frozen=True):
    """The events a command wrote (`--json` of a write)."""

    events: list[Event]


class SearchHit(Doc, frozen=True):
    """One match of `GET /api/v1/search`: its workspace, its place (1 first) and its row as
    `self search --json` prints it."""

    workspace: str
    rank: int
    record: EntityRow


class SearchAnswer(Doc, frozen=True):
    """`GET /api/v1/search`: the first `limit` of `matched` records, best first."""

    query: str
    project: str | None
    workspaces: list[str]
    matched: int
    hits: list[SearchHit]
    hidden: int = 0  # matches left out because context shows them, up to 1,000 (0 with all or exposure)


class HookAnswer(Doc, frozen=True):
    """`POST /hooks/WS` (202): `accepted` (a sync of the workspace is asked for), `coalesced`
    (one is in flight: one more round follows it) or `ignored` (`reason`: `other-branch`,
    `own-push`); `delivery` is the host's delivery id."""

    outcome: str
    reason: str | None = None
    delivery: str | None = None
