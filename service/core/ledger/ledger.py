"""The ledger's records: claims, decisions and questions, their write rules and commands.

Records are entities labelled `claim`, `decision` or `question`; their relations are typed
links (`supports` grouped into AND sets, `depends-on`, `answers`, `supersedes`), all within
the record's own log. `check_record` is the one gate every new record passes (preset verbs,
`state add`, the Docket import). What is derived from the records is in `derived`; the
exchange with Docket and Parquet in `exchange`; work units' declared sets in `worksets`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec

from service.core.commands import commands
from service.core.commands.commands import AddRequest, Clock
from service.core.commands.config import WorkspaceConfig
from service.core.errors import Invalid
from service.core.events.events import (
    CLAIM_STATES,
    DECISION_STATES,
    LEDGER_KINDS,
    LEDGER_STATES,
    SUPERSEDE_REASONS,
    Assessed,
    EntityWhy,
    Event,
    LedgerFields,
    Link,
    Outcome,
    Reviewed,
    ReviewMark,
)
from service.core.fold.state import Entity, Fact, State, kind_of
from service.core.gates.globs import relative
from service.core.ledger.derived import DEFAULT_REASON, GROUNDED, INHERITED, derive

LINK_FIELDS = {  # the command field that names a link of each type
    "supports": "supports",
    "depends-on": "depends_on",
    "answers": "answers",
    "supersedes": "supersedes",
}
OBJECTION_FIELDS = {  # the field each phrasing or choice rule concerns
    "phrased as a question": "text",
    "empty choice": "choice",
    "empty alternative": "alternatives",
    "alternative is the choice": "alternatives",
    "alternative listed twice": "alternatives",
    "revisit is not a date": "revisit",
}


class LedgerInput(msgspec.Struct, frozen=True, kw_only=True):
    """The ledger flags of `self claim add`, `self question add` and `self decide`."""

    state: str | None = None
    choice: str | None = None
    alternatives: tuple[str, ...] = ()
    decided_by: str | None = None
    depends_on: tuple[str, ...] = ()
    supports: tuple[str, ...] = ()  # each "ID[,ID...]" is one AND set
    answers: tuple[str, ...] = ()
    supersede_reason: str | None = None
    applies_to: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    revisit: str | None = None
    cost_if_wrong: str | None = None
    pinned: bool = False
    options: tuple[str, ...] = ()  # a question's "ANSWER=ACTION" pairs
    gate: str | None = None  # a policy decision: allow|deny|ask for matching tool calls
    tool: str | None = None
    pattern: str | None = None


def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()


def is_question(text: str) -> bool:
    """Phrased as a question: it ends with a question mark."""
    return text.rstrip().endswith(("?", "？"))


def parse_sets(given: Sequence[str]) -> list[list[str]]:
    """`--supports a,b --supports c` → [[a, b], [c]]; an empty member is refused."""
    sets: list[list[str]] = []
    for item in given:
        members = [m.strip() for m in re.split(r"[,\s]+", item.strip())]
        if not item.strip() or any(not m for m in members):
            raise Invalid(
                f"{{supports}} {item!r}: give record ids separated by commas, e.g. {{supports}} c1,c2",
                field="supports",
            )
        sets.append(list(dict.fromkeys(members)))
    return sets


def objections(kind: str, text: str, fields: LedgerFields) -> list[tuple[str, str]]:
    """The phrasing and choice rules a writer holds a new record to, each broken one as
    (rule, message). A write is refused on the first; an import reads records as their
    ledger holds them and only counts these (`exchange.import_docket`)."""
    found: list[tuple[str, str]] = []
    if kind in GROUNDED and is_question(text):
        found.append(
            (
                "phrased as a question",
                f"a {kind} states what holds, and {text.strip()!r} is phrased as a question: "
                "record it as a question, or state it without the question mark",
            )
        )
    if fields.choice is not None and not fields.choice.strip():
        found.append(("empty choice", "{choice} is empty: name the option chosen"))
    seen: set[str] = set()
    for alternative in fields.alternatives:
        flat = _flat(alternative)
        if not flat:
            found.append(
                ("empty alternative", "an {alternatives} is empty: name the option that was not chosen")
            )
        elif fields.choice is not None and flat == _flat(fields.choice):
            found.append(
                (
                    "alternative is the choice",
                    f"the alternative {alternative!r} is the choice itself: list only the options not chosen",
                )
            )
        elif flat in seen:
            found.append(("alternative listed twice", f"the alternative {alternative!r} is listed twice"))
        seen.add(flat)
    if fields.revisit is not None:
        try:
            commands.valid_date(fields.revisit)
        except Invalid as exc:
            found.append(("revisit is not a date", f"{{revisit}} {exc}"))
    return found


def check_record(
    state: State,
    record_id: str | None,
    kind: str,
    text: str,
    fields: LedgerFields,
    links: Sequence[Link],
) -> None:
    """Every write rule of a new ledger record; raises Invalid naming the one broken.

    `links` hold resolved ids. `record_id` is the new record's id when it is known (an
    import keeps ids); relations must point at existing records created before it.
    """
    if kind not in LEDGER_KINDS:
        raise Invalid(f"{kind!r} is not a ledger kind ({', '.join(LEDGER_KINDS)})", field="labels")
    states = LEDGER_STATES[kind] if kind != "decision" else DECISION_STATES[:1]  # made adopted
    if fields.state is not None and fields.state not in states:
        raise Invalid(f"{{state}} {fields.state!r}: a new {kind} is {' | '.join(states)}", field="state")
    if kind != "decision":
        for name, value in (
            ("choice", fields.choice),
            ("alternatives", fields.alternatives),
            ("decided_by", fields.decided_by),
        ):
            if value:
                raise Invalid(
                    f"{{{name}}} belongs to decisions; a {kind} has none", code="wrong-kind", field=name
                )
    if (fields.gate or fields.tool or fields.pattern) and kind != "decision":
        raise Invalid(
            f"{{gate}}, {{tool}} and {{pattern}} make a policy decision; a {kind} has none",
            code="wrong-kind",
            field=("gate", "tool", "pattern"),
        )
    if fields.gate is not None and fields.gate not in ("allow", "deny", "ask"):
        raise Invalid(f"{{gate}} {fields.gate!r} is not one of allow, deny, ask", field="gate")
    if (fields.gate is None) != (fields.pattern is None) or (fields.tool and not fields.gate):
        raise Invalid(
            'a policy gives {gate} and {pattern} together (e.g. {gate} deny {pattern} "git push --force*")',
            code="missing-value",
            field=("gate", "pattern"),
        )
    if fields.options and kind != "question":
        raise Invalid(
            f"{{options}} belongs to questions; a {kind} has no candidate answers",
            code="wrong-kind",
            field="options",
        )
    answers = [_flat(o.answer) for o in fields.options]
    if any(not a for a in answers) or any(not _flat(o.action) for o in fields.options):
        raise Invalid('an {options} is "ANSWER=ACTION": both sides non-empty', field="options")
    if len(set(answers)) != len(answers):
        raise Invalid("an answer is listed twice in {options}", field="options")
    for rule, message in objections(kind, text, fields)[:1]:
        raise Invalid(message, field=OBJECTION_FIELDS[rule])
    if fields.supersede_reason is not None and fields.supersede_reason not in SUPERSEDE_REASONS:
        raise Invalid(
            f"{{supersede_reason}} {fields.supersede_reason!r} is not one of restate, revise, reverse",
            field="supersede_reason",
        )
    superseding = [link for link in links if link.type == "supersedes"]
    if fields.supersede_reason is not None and not superseding:
        raise _reason_alone()
    for link in links:
        _check_link(state, record_id, kind, link)


def _check_link(state: State, record_id: str | None, kind: str, link: Link) -> None:
    target = state.entities.get(link.target)
    field = LINK_FIELDS[link.type]
    flag = "{" + field + "}"
    if target is None:
        raise Invalid(f"{flag} {link.target}: no such record", code="not-found", field=field)
    if record_id is not None and link.target == record_id:
        raise Invalid(f"{flag} {link.target}: a record cannot name itself", field=field)
    if record_id is not None and target.created >= record_id:
        raise Invalid(
            f"{flag} {link.target}: a relation points only at records created before this one", field=field
        )
    fact = state.ledger.get(link.target)
    target_kind = fact.kind if fact is not None else None
    shown = target_kind or (target.labels[0] if target.labels else "record without a label")
    if link.type in ("supports", "depends-on"):
        if kind != "decision" and link.type == "depends-on":
            raise _prerequisites(kind)
        if target_kind not in GROUNDED:
            raise Invalid(
                f"{flag} {link.target}: it is a {shown}; {link.type} names claims or decisions",
                code="wrong-kind",
                field=field,
            )
    elif link.type == "answers":
        if target_kind != "question":
            raise Invalid(
                f"{{answers}} {link.target}: it is a {shown}; only a question is answered",
                code="wrong-kind",
                field=field,
            )
    elif link.type == "supersedes":
        if fact is None or not fact.current or not target.live:
            word = target.status if not target.live else "not current"
            raise Invalid(
                f"{{supersedes}} {link.target}: it is {word}; only a live record is superseded",
                code="wrong-state",
                field=field,
            )
        if target_kind != kind:
            raise Invalid(
                f"{{supersedes}} {link.target}: it is a {shown}; a {kind} supersedes only a {kind}",
                code="wrong-kind",
                field=field,
            )


class Unresolved(Invalid):
    """A relation names no record of the new record's log (the wiring looks in the others,
    to say where the record is)."""

    def __init__(self, field: str, prefix: str, cause: Invalid) -> None:
        super().__init__(f"{{{field}}} {prefix}: {cause}", code=cause.code, field=field)
        self.prefix = prefix


def _resolve(state: State, prefix: str, field: str) -> str:
    try:
        return commands.find(state, prefix).id
    except Invalid as exc:
        raise Unresolved(field, prefix, exc) from exc


def _prerequisites(kind: str) -> Invalid:
    return Invalid(
        f"{{depends_on}}: only decisions have prerequisites; a {kind} has none",
        code="wrong-kind",
        field="depends_on",
    )


def _reason_alone() -> Invalid:
    return Invalid(
        "{supersede_reason} says how a record supersedes another: pass {supersedes} ID too",
        code="missing-value",
        field=("supersede_reason", "supersedes"),
    )


def links_for(state: State, kind: str, given: LedgerInput, supersedes: str | None) -> list[Link]:
    """The typed links of a new record, ids resolved from prefixes, in declared order."""
    if given.depends_on and kind != "decision":
        raise _prerequisites(kind)
    links: list[Link] = []
    for number, members in enumerate(parse_sets(given.supports)):
        resolved = dict.fromkeys(_resolve(state, m, "supports") for m in members)
        links += [Link("supports", target, number) for target in resolved]
    for link_type, values in (("depends-on", given.depends_on), ("answers", given.answers)):
        for target in dict.fromkeys(_resolve(state, v, LINK_FIELDS[link_type]) for v in values):
            links.append(Link(link_type, target))
    if supersedes is not None:
        links.append(Link("supersedes", _resolve(state, supersedes, "supersedes")))
    return links


def fields_for(kind: str, given: LedgerInput, superseding: bool) -> LedgerFields:
    """The recorded fields; the reason of a supersession is always written down."""
    reason = given.supersede_reason or (DEFAULT_REASON if superseding else None)
    return LedgerFields(
        state=given.state,
        choice=given.choice.strip() if given.choice else given.choice,
        alternatives=tuple(a.strip() for a in given.alternatives),
        decided_by=given.decided_by,
        supersede_reason=reason,
        applies_to=tuple(relative(path, "applies_to") for path in given.applies_to),
        evidence=tuple(given.evidence),
        revisit=commands.valid_date(given.revisit) if given.revisit else None,
        cost_if_wrong=given.cost_if_wrong,
        pinned=given.pinned,
        options=tuple(parse_option(o) for o in given.options),
        gate=given.gate,
        tool=given.tool,
        pattern=given.pattern,
    )


def parse_option(text: str) -> Outcome:
    """`"JSON=use the stdlib parser"` → the answer and the action it leads to."""
    answer, sep, action = text.partition("=")
    if not sep or not answer.strip() or not action.strip():
        raise Invalid(
            f'{{options}} {text!r} is not "ANSWER=ACTION" (e.g. {{options}} "JSON=parse with the stdlib")',
            field="options",
        )
    return Outcome(answer.strip(), action.strip())


def moot(fields: LedgerFields) -> bool:
    """Every declared answer leads to the same action: asking changes nothing."""
    return len(fields.options) >= 2 and len({_flat(o.action) for o in fields.options}) == 1


def check_question(state: State, prefix: str) -> dict[str, Any]:
    """Whether any answer of a question changes the action (value of information)."""
    entity, fact = _fact(state, prefix)
    if fact.kind != "question":
        raise Invalid(f"{entity.id} is a {fact.kind}; only a question is checked", code="wrong-kind")
    options = entity.ledger.options if entity.ledger is not None else ()
    if len(options) < 2:
        raise Invalid(
            f"{entity.id} declares {len(options)} candidate answer(s): a question is checked on two or more",
            code="wrong-state",
            field="options",
        )
    actions: dict[str, list[str]] = {}
    for option in options:
        actions.setdefault(_flat(option.action), []).append(option.answer)
    is_moot = len(actions) == 1
    return {
        "question": entity.id,
        "text": entity.text,
        "moot": is_moot,
        "changes_action": not is_moot,
        "options": [{"answer": o.answer, "action": o.action} for o in options],
        "actions": len(actions),
    }


def add(
    state: State, config: WorkspaceConfig, clock: Clock, request: AddRequest, given: LedgerInput
) -> list[Event]:
    """A new claim, decision or question, validated; `--pin` places it at full exposure."""
    kind = kind_of(request.labels)
    if kind is None:
        if given != LedgerInput():
            raise Invalid(
                "ledger flags belong to claims, decisions and questions (labels claim|decision|question)"
            )
        return commands.add(state, config, clock, request)
    if given.supersede_reason is not None and request.supersedes is None:
        raise _reason_alone()
    links = links_for(state, kind, given, request.supersedes)
    fields = fields_for(kind, given, request.supersedes is not None)
    check_record(state, None, kind, request.text, fields, links)
    placed = request
    if given.pinned:
        placed = msgspec.structs.replace(placed, exposure="full")
    recorded = fields if fields != LedgerFields() else None
    relations = tuple(link for link in links if link.type != "supersedes")
    replaced = next((link.target for link in links if link.type == "supersedes"), None)
    final = msgspec.structs.replace(
        placed, links=(*request.links, *relations), supersedes=replaced, ledger=recorded
    )
    return commands.add(state, config, clock, final)


def _fact(state: State, prefix: str) -> tuple[Entity, Fact]:
    entity = commands.find(state, prefix)
    fact = state.ledger.get(entity.id)
    if fact is None:
        raise Invalid(f"{entity.id} is not a claim, decision or question", code="wrong-kind")
    return entity, fact


def assess(state: State, clock: Clock, prefix: str, new_state: str, why: str | None) -> list[Event]:
    """Move a claim to another recorded state."""
    entity, fact = _fact(state, prefix)
    if fact.kind != "claim":
        raise Invalid(f"{entity.id} is a {fact.kind}; only a claim is assessed", code="wrong-kind")
    if new_state not in CLAIM_STATES:
        raise Invalid(f"{{state}} {new_state!r} is not one of {', '.join(CLAIM_STATES)}", field="state")
    if not fact.current:
        raise Invalid(
            f"{entity.id} is {entity.status}; assess the record that replaced it", code="wrong-state"
        )
    if fact.state == new_state:
        raise Invalid(f"{entity.id} is already {new_state}", code="wrong-state", field="state")
    return [commands.event(clock, "entity.assessed", Assessed(entity.id, new_state, why))]


def revoke(state: State, clock: Clock, prefix: str, why: str | None) -> list[Event]:
    """Revoke an adopted decision; it stays in history and what stood on it loses a ground."""
    entity, fact = _fact(state, prefix)
    if fact.kind != "decision":
        raise Invalid(f"{entity.id} is a {fact.kind}; only a decision is revoked", code="wrong-kind")
    if not fact.current:
        raise Invalid(
            f"{entity.id} is {entity.status}; only a current decision is revoked", code="wrong-state"
        )
    if fact.state == "revoked":
        raise Invalid(f"{entity.id} is already revoked")
    return [commands.event(clock, "entity.revoked", EntityWhy(entity.id, why))]


def review(state: State, clock: Clock, prefix: str, why: str | None) -> list[Event]:
    """Acknowledge the flags a record owes of its own; they stay cleared until a ground
    changes again. A flag it inherits (a ground that is itself flagged or blocked) is not
    its to acknowledge: it clears when that ground's does."""
    entity, _ = _fact(state, prefix)
    view = derive(state, [entity.id])[entity.id]
    if not view.review_owed:
        raise Invalid(f"{entity.id} owes no review (its support is {view.support})")
    own = [o for o in view.review_owed if o.reason not in INHERITED]
    if not own:
        grounds = ", ".join(dict.fromkeys(o.ground for o in view.review_owed))
        raise Invalid(
            f"{entity.id} has nothing of its own to review: its flags come from {grounds}; "
            "review or fix those"
        )
    marks = tuple(ReviewMark(o.ground, o.head, o.reason, o.as_of) for o in own)
    return [commands.event(clock, "entity.reviewed", Reviewed(entity.id, marks, why))]


def record_row(e: Entity, fact: Fact) -> dict[str, object]:
    """The recorded ledger fields of one record (relations from its links)."""
    fields = e.ledger or LedgerFields()
    return {
        "choice": fields.choice,
        "alternatives": list(fields.alternatives),
        "decided_by": fields.decided_by,
        "supports": [list(s) for s in fact.supports],
        "depends_on": list(fact.depends_on),
        "answers": list(fact.answers),
        "supersede_reason": fact.reason,
        "applies_to": list(fields.applies_to),
        "rationale": e.why,
        "evidence": [e if isinstance(e, str) else msgspec.to_builtins(e) for e in fields.evidence],
        "revisit": fields.revisit,
        "cost_if_wrong": fields.cost_if_wrong,
        "pinned": fields.pinned,
        "alias": fields.alias,
        "source": fields.source,
        "options": [{"answer": o.answer, "action": o.action} for o in fields.options],
        "moot": moot(fields) if e.ledger is not None and fields.options else None,
    }


def aliases(state: State, source: str | None = None) -> dict[str, str]:
    """Imported records of one source ledger (None: every source): old id (alias) → id here."""
    return {
        e.ledger.alias: e.id
        for e in state.entities.values()
        if e.ledger is not None and e.ledger.alias and (source is None or e.ledger.source == source)
    }
