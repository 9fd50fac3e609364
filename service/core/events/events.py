"""The event envelope, one typed payload per event type, and the canonical encoding.

An event is one line of JSON: `{id, ts, type, origin, project, payload, refs?}`. The payload
stays raw in the envelope and is decoded by the struct its type names, so unknown types
survive untouched (forward compatibility) and known ones are typed.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

import msgspec

from service.core.errors import Invalid

# The words a log's records use, each spelled once: a Literal where a value travels, the tuple
# of its values (in their order) where code lists or checks them.
WORKSPACE_LOG = ""  # the workspace log's key, and the `project` of its events; a project's is its slug
Actor = Literal["agent", "human"]
Exposure = Literal["full", "index", "search"]
EXPOSURES: tuple[Exposure, ...] = get_args(Exposure)  # the tiers, the most shown first
# A record's status (`Entity.status`) and a work unit's execution (`Entity.execution`, None: not
# started or none of these).
Status = Literal["proposed", "confirmed", "superseded", "retracted"]
STATUSES: tuple[Status, ...] = get_args(Status)
Execution = Literal["in-progress", "blocked", "done", "retired"]
# The ledger's kinds (a record's label) and the states each is recorded in, its first the one a
# record is given when none is named. Payloads keep `str`: a log another tool wrote may hold more.
LedgerKind = Literal["claim", "decision", "question"]
ClaimState = Literal["unassessed", "accepted", "disputed", "rejected"]
DecisionState = Literal["adopted", "revoked"]
QuestionState = Literal["open"]
LEDGER_KINDS: tuple[LedgerKind, ...] = get_args(LedgerKind)
CLAIM_STATES: tuple[ClaimState, ...] = get_args(ClaimState)
DECISION_STATES: tuple[DecisionState, ...] = get_args(DecisionState)
LEDGER_STATES: dict[str, tuple[str, ...]] = {
    "claim": CLAIM_STATES,
    "decision": DECISION_STATES,
    "question": get_args(QuestionState),
}
SupersedeReason = Literal["restate", "revise", "reverse"]  # how a successor changes what it replaces
SUPERSEDE_REASONS: tuple[SupersedeReason, ...] = get_args(SupersedeReason)
Scope = Literal["project", "workspace"]
# A project's slug (and a workspace's or user's name): its pattern, and the rule in words.
SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"
SLUG_RULE = "1-63 lowercase letters, digits and dashes, starting with a letter or digit"
# What a scope read from a log may be: selfhub writes project or workspace; Superself's scope
# could also name another project by its slug, where the record then renders.
ScopeRead = Annotated[str, msgspec.Meta(pattern=SLUG_PATTERN)]
LinkType = Literal["member-of", "supersedes", "relates", "supports", "depends-on", "answers"]


class Origin(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    actor: Actor
    confirmed: bool
    session: str | None = None
    by: str | None = None


class Event(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    id: str
    ts: str
    type: str
    origin: Origin
    project: str
    payload: msgspec.Raw
    refs: dict[str, object] | None = None


class Payload(msgspec.Struct, frozen=True, gc=False, omit_defaults=True, forbid_unknown_fields=False):
    """Base of every payload; unknown keys written by other tools are ignored on read."""


class Link(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """A typed relation. `set` groups `supports` links into AND sets (the sets are alternatives)."""

    type: str
    target: str
    set: int | None = None


class Outcome(msgspec.Struct, frozen=True, gc=False):
    """A question's candidate answer and the action it leads to."""

    answer: str
    action: str


class Evidence(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """A provenance reference as Docket records it: what was checked, when, at which commit."""

    ref: str
    checked_at: str | None = None
    commit: str | None = None


class DocketLine(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """A line of a Docket ledger as its file held it: the line's number, its JSON, and how it
    was written — every object's keys in the order written (the objects taken depth first,
    `core/ledger/docket.py: key_walk`) and the separators (compact, or `", "` and `": "`)."""

    at: int
    line: dict[str, Any]
    keys: tuple[str, ...]
    spaced: bool = False


class DocketTrail(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """What a Docket ledger wrote about one imported record, kept so an export writes it back:
    the record's own line (its provenance and `legacy` in it), its correction lines (their
    reasons and provenance) and its review lines (their notes and provenance)."""

    record: DocketLine
    corrections: tuple[DocketLine, ...] = ()
    reviews: tuple[DocketLine, ...] = ()


class LedgerFields(msgspec.Struct, frozen=True, gc=False, omit_defaults=True, forbid_unknown_fields=False):
    """What a claim, decision or question records beyond an entity's text (Docket's schema 2).

    Relations (supports, depends-on, answers, supersedes) are typed links of the assertion;
    these are the record's recorded state and its context and review metadata.
    """

    state: str | None = None
    choice: str | None = None
    alternatives: tuple[str, ...] = ()
    decided_by: str | None = None
    supersede_reason: str | None = None
    applies_to: tuple[str, ...] = ()
    evidence: tuple[str | Evidence, ...] = ()  # `--evidence` writes strings, an import objects
    revisit: str | None = None  # a date when written here; an import keeps Docket's free text
    cost_if_wrong: str | None = None
    pinned: bool = False
    alias: str | None = None  # the id an imported record had (Docket's c1, q2, d3)
    source: str | None = None  # the ledger it came from (an alias is unique within its source)
    corrections: tuple[str, ...] = ()  # the ledger's correction lines applied to it on import
    options: tuple[Outcome, ...] = ()  # a question's candidate answers and their actions
    reads: tuple[str, ...] = ()  # a work unit's read set (paths or globs)
    writes: tuple[str, ...] = ()  # a work unit's write set
    intends: tuple[str, ...] = ()  # a work unit's intended outcomes (paths or globs)
    gate: str | None = None  # a policy decision's ruling for matching tool calls: allow|deny|ask
    tool: str | None = None  # the tool a policy applies to (None: every tool)
    pattern: str | None = None  # a glob over the call's subject (command, file path)
    docket: DocketTrail | None = None  # an imported record's lines as the Docket ledger wrote them


class ReviewMark(msgspec.Struct, frozen=True, gc=False):
    """A flag a review acknowledged: the ground, the head of its supersession chain, the
    reason, and the id of the last event that changed the records the flag reads."""

    ground: str
    head: str
    reason: str
    as_of: str


class Assertion(Payload, frozen=True, gc=False):
    """entity.proposed / entity.confirmed: a new record, or (text omitted) a confirmation."""

    entity: str
    text: str | None = None
    labels: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    criteria: tuple[str, ...] = ()
    exposure: Exposure | None = None
    scope: ScopeRead | None = None
    priority: int | None = None
    why: str | None = None
    target: str | None = None
    ledger: LedgerFields | None = None
    expires: str | None = None  # a work proposal's lapse date, as Superself's `work propose` wrote it


class Superseded(Payload, frozen=True, gc=False):
    """`by` names the successor; Superself spelled it `successor`."""

    entity: str
    by: str | None = None
    why: str | None = None
    successor: str | None = None


class EntityWhy(Payload, frozen=True, gc=False):
    """retracted, declined, done, retired, restored, started, unblocked: an entity and maybe a
    reason (declined: the placements waiting on a person are dropped, the record stays where it is);
    started and done may carry the linked checkout's head commit (outcome tracking); a done
    written by Superself may carry its done-time report, a retirement its successor."""

    entity: str
    why: str | None = None
    commit: str | None = None
    report: str | None = None
    successor: str | None = None


class Blocked(Payload, frozen=True, gc=False):
    entity: str
    on: str | None = None
    why: str | None = None


class Placed(Payload, frozen=True, gc=False):
    entity: str
    exposure: Exposure | None = None
    priority: int | None = None
    scope: ScopeRead | None = None
    why: str | None = None
    pair: str | None = None


class Linked(Payload, frozen=True, gc=False):
    entity: str
    link: Link


class Covered(Payload, frozen=True, gc=False):
    entity: str
    criterion: str
    why: str | None = None


class Assessed(Payload, frozen=True, gc=False):
    """entity.assessed: a claim's recorded state moves (one of `CLAIM_STATES`)."""

    entity: str
    state: str
    why: str | None = None


class Reviewed(Payload, frozen=True, gc=False):
    """entity.reviewed: the flags owed on a record were looked at; they stay cleared until a
    ground changes again."""

    entity: str
    marks: tuple[ReviewMark, ...] = ()
    why: str | None = None


class ReportAdded(Payload, frozen=True, gc=False):
    """A report on a work unit. Superself wrote its commits in `refs.commits` and its other
    evidence in `notes`; `evidenceTyped` says its refs hold commits only."""

    text: str
    work: str | None = None
    commit: str | None = None
    artifact: str | None = None
    notes: tuple[str, ...] = ()
    evidence_typed: bool = msgspec.field(default=False, name="evidenceTyped")


class RunStarted(Payload, frozen=True, gc=False):
    work: str


class RunExited(Payload, frozen=True, gc=False):
    work: str
    code: int


class ProjectAdded(Payload, frozen=True, gc=False):
    slug: str
    description: str | None = None


class ProjectChanged(Payload, frozen=True, gc=False):
    """project.archived / project.restored. selfhub writes them in the workspace log naming
    `slug`; Superself wrote them in the project's own log naming `project`."""

    slug: str | None = None
    why: str | None = None
    project: str | None = None

    @property
    def name(self) -> str | None:
        return self.slug or self.project


class LegacyCriterion(msgspec.Struct, frozen=True, gc=False):
    """One exit criterion of a legacy milestone: its id (c1, c2, …; never reused) and text."""

    id: str
    text: str


class Legacy(Payload, frozen=True, gc=False):
    """Superself's pre-entity kinds (goal.set, decision.*, convention.*, objective.*,
    milestone.*, work.*): read forever by `service.core.fold.legacy`, written by no verb.

    Only the keys the fold reads are declared; the rest of a payload stays in the log.
    `target` is UNSET when absent: `objective.revised` and `milestone.revised` write null to
    withdraw a date.
    """

    text: str | None = None
    why: str | None = None
    outcome: str | None = None
    target: str | msgspec.UnsetType | None = msgspec.UNSET
    proposed: bool = False
    as_: str | None = msgspec.field(default=None, name="as")
    objective: str | None = None
    milestone: str | None = None
    work: str | None = None
    proposal: str | None = None
    requirement: str | None = None
    supersedes: str | None = None
    exit: tuple[LegacyCriterion, ...] = ()
    add_exit: tuple[LegacyCriterion, ...] = msgspec.field(default=(), name="addExit")
    drop_exit: tuple[str, ...] = msgspec.field(default=(), name="dropExit")
    criterion: str | None = None
    on: str | None = None
    successor: str | None = None
    expires: str | None = None


class Vouched(Payload, frozen=True, gc=False):
    """import.superself: the evidence-free dones one `self import superself` brought over,
    by id. Written by the importer alone (no command or post may write it), with an id just
    before the first it names, so the fold has read it when it reaches them."""

    judged: tuple[str, ...] = ()


VOUCHER = "import.superself"

PAYLOADS: dict[str, type[Payload]] = {
    "entity.proposed": Assertion,
    "entity.confirmed": Assertion,
    "entity.superseded": Superseded,
    "entity.retracted": EntityWhy,
    "entity.placed": Placed,
    "entity.declined": EntityWhy,
    "entity.linked": Linked,
    "entity.unlinked": Linked,
    "entity.covered": Covered,
    "entity.started": EntityWhy,
    "entity.blocked": Blocked,
    "entity.unblocked": EntityWhy,
    "entity.done": EntityWhy,
    "entity.retired": EntityWhy,
    "entity.restored": EntityWhy,
    "entity.assessed": Assessed,
    "entity.revoked": EntityWhy,
    "entity.reviewed": Reviewed,
    "report.added": ReportAdded,
    "work.run-started": RunStarted,
    "work.run-exited": RunExited,
    "project.added": ProjectAdded,
    "project.archived": ProjectChanged,
    "project.restored": ProjectChanged,
    VOUCHER: Vouched,
}
LEGACY_PREFIXES = ("goal.", "decision.", "convention.", "objective.", "milestone.", "work.")
WRITABLE = frozenset(PAYLOADS) - {VOUCHER}  # the types a command or a post may write
# The most bytes one event line may take (canonical, newline included): the append gate
# refuses a bigger event, and a sync refuses a remote segment line over it (so a segment of
# 1,000 events has a bound too).
MAX_EVENT_BYTES = 64 * 1024

_decoders: dict[type[Payload], msgspec.json.Decoder[Payload]] = {}
_event_decoder = msgspec.json.Decoder(Event)
_encoder = msgspec.json.Encoder(order="sorted")
_builtin_decoder = msgspec.json.Decoder()


def payload_type(event_type: str) -> type[Payload] | None:
    """The payload struct of a known type; None for an unknown one (kept, not folded)."""
    known = PAYLOADS.get(event_type)
    if known is not None:
        return known
    if event_type.startswith(LEGACY_PREFIXES):
        return Legacy
    return None


def payload_of(event: Event) -> Payload | None:
    """The typed payload; None for unknown types. Raises msgspec.ValidationError if malformed."""
    kind = payload_type(event.type)
    if kind is None:
        return None
    decoder = _decoders.get(kind)
    if decoder is None:
        decoder = _decoders[kind] = msgspec.json.Decoder(kind)
    return decoder.decode(event.payload)


def decode_line(line: bytes) -> Event:
    """One log line to an event; raises Invalid with the reason when it is not one."""
    try:
        event = _event_decoder.decode(line)
        payload_of(event)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise Invalid(str(exc)) from exc
    return event


def decode_unchecked(line: bytes) -> Event:
    """The envelope alone; the payload is validated when the fold reads it."""
    return _event_decoder.decode(line)


def make(
    event_id: str,
    ts: str,
    event_type: str,
    origin: Origin,
    project: str,
    payload: Payload,
    refs: dict[str, object] | None = None,
) -> Event:
    """A new event whose payload is already in canonical bytes."""
    return Event(event_id, ts, event_type, origin, project, msgspec.Raw(_encoder.encode(payload)), refs)


def canonical(event: Event) -> bytes:
    """The one byte form of an event: keys sorted, no whitespace, UTF-8, newline-terminated."""
    payload = _encoder.encode(_builtin_decoder.decode(event.payload))
    return _encoder.encode(msgspec.structs.replace(event, payload=msgspec.Raw(payload))) + b"\n"


def as_dict(event: Event) -> dict[str, object]:
    """The event as plain JSON-ready data (payload decoded)."""
    data: dict[str, object] = _builtin_decoder.decode(canonical(event))
    return data
