"""The ledger: claims, decisions and questions, their validation, and their derived views.

Records are entities labelled `claim`, `decision` or `question`; their relations are typed
links (`supports` grouped into AND sets, `depends-on`, `answers`, `supersedes`). The fold
keeps a `Fact` per record in `State.ledger`; everything here that is derived reads only
those facts, so it is a pure function of the event set and comes out the same from a hot
slice of the state as from the whole of it. Nothing derived is ever stored.

Derived views (`derive`):

- current: not superseded, not retracted;
- blocked: an adopted decision with a prerequisite that is not *available*, i.e. not (the
  head of its supersession chain is) a current accepted claim or a current adopted decision
  that is itself neither blocked nor unsupported. Chains are followed through `restate` and
  `revise`; a `reverse`, a retraction or a supersession without successor ends them;
- support status (truth maintenance, Doyle 1979): each AND set counts as its weakest
  ground and a record keeps its best set. A ground is *lost* when it is reversed,
  rejected, revoked, retracted or itself unsupported, *flagged* when it is revised,
  unassessed, disputed or blocked, and clean otherwise. A record is `unsupported` when no
  complete set survives, `flagged` when its best set holds a flagged ground (listed in
  `review_owed` with the ground, the head of its chain, the reason and the event it dates
  from), `clean` otherwise. Values are the least fixed point, so ungrounded cycles are
  unsupported. A review acknowledges the flags owed at that moment; a flag that changes
  (a different head, reason or later event) is owed again;
- resolved: a question is resolved by a current accepted claim, or a current adopted
  decision that is neither blocked nor unsupported, that answers it (`resolved_by`);
  superseding the answer reopens the question.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from service.model import commands
from service.model.commands import AddRequest, Clock
from service.model.config import WorkspaceConfig
from service.model.errors import Invalid
from service.model.events import (
    Assertion,
    Assessed,
    EntityWhy,
    Event,
    LedgerFields,
    Link,
    Outcome,
    Reviewed,
    ReviewMark,
    make,
)
from service.model.state import DEFAULT_STATES, Entity, Fact, State, kind_of

KINDS = tuple(DEFAULT_STATES)
CLAIM_STATES = ("unassessed", "accepted", "disputed", "rejected")
DECISION_STATES = ("adopted", "revoked")
SUPERSEDE_REASONS = ("restate", "revise", "reverse")
DEFAULT_REASON = "revise"  # a supersession that does not say how flags what stood on it
SUPPORT_WORDS = ("unsupported", "flagged", "clean")
LOST, FLAGGED, CLEAN = 0, 1, 2
_GROUNDED = frozenset({"claim", "decision"})


# --- derived views --------------------------------------------------------------------------


class Owed(msgspec.Struct, frozen=True):
    """One flagged ground of a record's best support set, not yet acknowledged by a review."""

    ground: str
    head: str
    reason: str
    as_of: str


class Lost(msgspec.Struct, frozen=True):
    """Why a ground of an unsupported record is gone (`head` is where its chain ended)."""

    ground: str
    reason: str
    head: str | None = None


class View(msgspec.Struct, frozen=True):
    """The derived view of one ledger record."""

    kind: str
    state: str
    current: bool
    support: str
    review_owed: tuple[Owed, ...] = ()
    lost: tuple[Lost, ...] = ()
    blocked: bool = False
    blocked_by: tuple[str, ...] = ()
    resolved: bool | None = None
    resolved_by: tuple[str, ...] = ()


class _Chain(msgspec.Struct, frozen=True):
    """Where a cited id stands now: the head of its supersession chain, or why it is gone."""

    head: str | None
    value: int
    reason: str | None
    path: tuple[str, ...]


class _Deriver:
    def __init__(self, facts: dict[str, Fact]) -> None:
        self.facts = facts
        self.chains: dict[str, _Chain] = {}
        self.support: dict[str, int] = {}
        self.blocked: dict[str, bool] = {}

    # chains are static: they read recorded facts only
    def chain(self, start: str) -> _Chain:
        found = self.chains.get(start)
        if found is None:
            found = self.chains[start] = self._follow(start)
        return found

    def _follow(self, start: str) -> _Chain:
        path = [start]
        value, reason = CLEAN, None
        here = start
        while True:
            fact = self.facts.get(here)
            if fact is None or fact.kind not in _GROUNDED:
                return _Chain(None, LOST, "not a claim or decision", tuple(path))
            if fact.current:
                return _Chain(here, value, reason, tuple(path))
            nxt = fact.superseded_by
            if fact.retracted or nxt is None:
                word = "retracted" if fact.retracted else "superseded without a successor"
                return _Chain(None, LOST, word, tuple(path))
            if nxt in path:
                return _Chain(None, LOST, "supersession cycle", tuple(path))
            successor = self.facts.get(nxt)
            how = (successor.reason if successor is not None else None) or DEFAULT_REASON
            path.append(nxt)
            if how == "reverse":
                return _Chain(nxt, LOST, "reversed", tuple(path))
            if how == "revise" and value == CLEAN:
                value, reason = FLAGGED, "revised"
            here = nxt

    def available(self, head: str) -> bool:
        """A current accepted claim, or a current adopted decision neither blocked nor unsupported."""
        fact = self.facts[head]
        if not fact.current or self.support.get(head, CLEAN) == LOST:
            return False
        if fact.kind == "claim":
            return fact.state == "accepted"
        return fact.kind == "decision" and fact.state == "adopted" and not self.blocked.get(head, False)

    def ground(self, record: Fact, target: str) -> tuple[int, str | None, str | None, str | None]:
        """(value, reason, head, as_of) of one cited ground, acknowledged reviews applied."""
        chain = self.chain(target)
        if chain.head is None or chain.value == LOST:
            return LOST, chain.reason, chain.head, None
        head = chain.head
        fact = self.facts[head]
        own, own_reason = CLEAN, None
        if fact.kind == "claim":
            if fact.state == "rejected":
                own, own_reason = LOST, "rejected"
            elif fact.state != "accepted":
                own, own_reason = FLAGGED, fact.state
        elif fact.state == "revoked":
            own, own_reason = LOST, "revoked"
        elif fact.state != "adopted":
            own, own_reason = FLAGGED, fact.state
        elif self.blocked.get(head, False):
            own, own_reason = FLAGGED, "blocked"
        if own == LOST:
            return LOST, own_reason, head, None
        if self.support.get(head, CLEAN) == LOST:
            return LOST, "unsupported", head, None
        if chain.value == FLAGGED:
            reason: str | None = chain.reason
        elif own == FLAGGED:
            reason = own_reason
        else:
            return CLEAN, None, head, None
        assert reason is not None
        as_of = self.as_of(chain, reason)
        if ReviewMark(target, head, reason, as_of) in record.reviewed:
            return CLEAN, None, head, None
        return FLAGGED, reason, head, as_of

    def as_of(self, chain: _Chain, reason: str) -> str:
        """The last event that changed the records a flag reads."""
        records = list(chain.path)
        if reason == "blocked" and chain.head is not None:
            for prerequisite in self.facts[chain.head].depends_on:
                records += self.chain(prerequisite).path
        return max(self.facts[r].changed for r in records if r in self.facts)

    def set_value(self, record: Fact, members: Sequence[str]) -> int:
        return min((self.ground(record, m)[0] for m in members), default=LOST)

    def support_of(self, record: Fact) -> int:
        return max((self.set_value(record, s) for s in record.supports), default=CLEAN)

    def is_blocked(self, record: Fact) -> bool:
        return any(not self._prerequisite_ok(p) for p in record.depends_on)

    def _prerequisite_ok(self, prerequisite: str) -> bool:
        chain = self.chain(prerequisite)
        return chain.head is not None and chain.value != LOST and self.available(chain.head)

    def solve(self) -> None:
        """The least fixed point: start from nothing supported and every prerequisite missing,
        and raise values until nothing changes (each value only ever rises)."""
        readers: dict[str, set[str]] = {}
        work: list[str] = []
        for record_id, fact in self.facts.items():
            if not fact.supports and not fact.depends_on:
                continue
            cited = [m for s in fact.supports for m in s]
            if fact.supports:
                self.support[record_id] = LOST
            if _can_block(fact):
                self.blocked[record_id] = True
                cited += fact.depends_on
            if not cited:
                continue
            work.append(record_id)
            for target in cited:  # a record reads the support and blocking of each head it cites
                head = self.chain(target).head
                if head is not None:
                    readers.setdefault(head, set()).add(record_id)
        queue = deque(sorted(work))
        queued = set(queue)
        while queue:
            record_id = queue.popleft()
            queued.discard(record_id)
            fact = self.facts[record_id]
            changed = False
            if fact.supports:
                value = self.support_of(fact)
                if value != self.support[record_id]:
                    self.support[record_id] = value
                    changed = True
            if record_id in self.blocked:
                blocked = self.is_blocked(fact)
                if blocked != self.blocked[record_id]:
                    self.blocked[record_id] = blocked
                    changed = True
            if changed:
                for reader in sorted(readers.get(record_id, ())):
                    if reader not in queued:
                        queue.append(reader)
                        queued.add(reader)

    def view(self, record_id: str, resolvers: dict[str, list[str]]) -> View:
        fact = self.facts[record_id]
        value = self.support.get(record_id, CLEAN)
        owed: list[Owed] = []
        lost: list[Lost] = []
        if value == FLAGGED:
            best = next(s for s in fact.supports if self.set_value(fact, s) == FLAGGED)
            for member in best:
                got, reason, head, as_of = self.ground(fact, member)
                if got == FLAGGED and reason and head and as_of:
                    owed.append(Owed(member, head, reason, as_of))
        elif value == LOST:
            for members in fact.supports:
                for member in members:
                    got, reason, head, _ = self.ground(fact, member)
                    if got == LOST:
                        lost.append(Lost(member, reason or "lost", head))
        blocked = self.blocked.get(record_id, False)
        blocked_by = tuple(p for p in fact.depends_on if not self._prerequisite_ok(p)) if blocked else ()
        resolved: bool | None = None
        resolved_by: tuple[str, ...] = ()
        if fact.kind == "question":
            resolved_by = tuple(a for a in resolvers.get(record_id, ()) if self.available(a))
            resolved = bool(resolved_by)
        return View(
            kind=fact.kind,
            state=fact.state,
            current=fact.current,
            support=SUPPORT_WORDS[value],
            review_owed=tuple(owed),
            lost=tuple(lost),
            blocked=blocked,
            blocked_by=blocked_by,
            resolved=resolved,
            resolved_by=resolved_by,
        )


def _can_block(fact: Fact) -> bool:
    return fact.kind == "decision" and fact.state == "adopted" and bool(fact.depends_on)


def derive(state: State, only: Iterable[str] | None = None) -> dict[str, View]:
    """The derived view of every ledger record of `state` (or of the ids in `only`)."""
    facts = state.ledger
    if not facts:
        return {}
    deriver = _Deriver(facts)
    deriver.solve()
    resolvers: dict[str, list[str]] = {}
    for record_id in sorted(i for i, fact in facts.items() if fact.answers and fact.kind in _GROUNDED):
        for question in facts[record_id].answers:
            resolvers.setdefault(question, []).append(record_id)
    wanted = facts if only is None else [i for i in only if i in facts]
    return {record_id: deriver.view(record_id, resolvers) for record_id in wanted}


def plain(view: View) -> bool:
    """Nothing to mark: an accepted claim or adopted decision, clean, unblocked."""
    return (
        view.support == "clean"
        and not view.blocked
        and view.resolved is None
        and view.state
        in (
            "accepted",
            "adopted",
        )
    )


def view_row(view: View) -> dict[str, object]:
    """The derived keys a ledger record's JSON row carries (the `state list --json` contract)."""
    return {
        "kind": view.kind,
        "state": view.state,
        "current": view.current,
        "support": view.support,
        "review_owed": [msgspec.structs.asdict(o) for o in view.review_owed],
        "lost": [msgspec.structs.asdict(lost) for lost in view.lost],
        "blocked": view.blocked,
        "blocked_by": list(view.blocked_by),
        "resolved": view.resolved,
        "resolved_by": list(view.resolved_by),
    }


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
        "evidence": list(fields.evidence),
        "revisit": fields.revisit,
        "cost_if_wrong": fields.cost_if_wrong,
        "pinned": fields.pinned,
        "alias": fields.alias,
        "options": [{"answer": o.answer, "action": o.action} for o in fields.options],
        "moot": moot(fields) if e.ledger is not None and fields.options else None,
    }


def owing(state: State, views: dict[str, View] | None = None) -> int:
    """How many current records owe a review (from the facts alone: a slice counts them too).
    `views` holds those of `owes(state)` when they were derived already."""
    if views is None:
        views = derive(state, owes(state))
    return sum(1 for i in owes(state) if views[i].review_owed)


def owes(state: State) -> list[str]:
    """The current records that may owe a review: those with support sets."""
    return [i for i, fact in state.ledger.items() if fact.supports and fact.current]


# --- validation and commands ---------------------------------------------------------------


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
            raise Invalid(f"--supports {item!r}: give record ids separated by commas, e.g. --supports c1,c2")
        sets.append(list(dict.fromkeys(members)))
    return sets


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
    if kind not in KINDS:
        raise Invalid(f"{kind!r} is not a ledger kind ({', '.join(KINDS)})")
    if kind in _GROUNDED and is_question(text):
        raise Invalid(
            f"a {kind} states what holds, and {text.strip()!r} is phrased as a question: "
            f'record it with `self question add "…"`, or state it without the question mark'
        )
    states = {"claim": CLAIM_STATES, "decision": ("adopted",), "question": ("open",)}[kind]
    if fields.state is not None and fields.state not in states:
        raise Invalid(f"--state {fields.state!r}: a new {kind} is {' | '.join(states)}")
    if kind != "decision":
        for name, value in (
            ("--choice", fields.choice),
            ("--alternative", fields.alternatives),
            ("--decided-by", fields.decided_by),
        ):
            if value:
                raise Invalid(f"{name} belongs to decisions; a {kind} has none")
    if (fields.gate or fields.tool or fields.pattern) and kind != "decision":
        raise Invalid(f"--gate, --tool and --pattern make a policy decision; a {kind} has none")
    if fields.gate is not None and fields.gate not in ("allow", "deny", "ask"):
        raise Invalid(f"--gate {fields.gate!r} is not one of allow, deny, ask")
    if (fields.gate is None) != (fields.pattern is None) or (fields.tool and not fields.gate):
        raise Invalid(
            'a policy gives --gate and --pattern together (e.g. --gate deny --pattern "git push --force*")'
        )
    if fields.options and kind != "question":
        raise Invalid(f"--option belongs to questions; a {kind} has no candidate answers")
    answers = [_flat(o.answer) for o in fields.options]
    if any(not a for a in answers) or any(not _flat(o.action) for o in fields.options):
        raise Invalid('an --option is "ANSWER=ACTION": both sides non-empty')
    if len(set(answers)) != len(answers):
        raise Invalid("an answer is listed twice in --option")
    if fields.choice is not None and not fields.choice.strip():
        raise Invalid("--choice is empty: name the option chosen")
    seen: set[str] = set()
    for alternative in fields.alternatives:
        flat = _flat(alternative)
        if not flat:
            raise Invalid("an --alternative is empty: name the option that was not chosen")
        if fields.choice is not None and flat == _flat(fields.choice):
            raise Invalid(
                f"the alternative {alternative!r} is the choice itself: list only the options not chosen"
            )
        if flat in seen:
            raise Invalid(f"the alternative {alternative!r} is listed twice")
        seen.add(flat)
    if fields.supersede_reason is not None and fields.supersede_reason not in SUPERSEDE_REASONS:
        raise Invalid(
            f"--supersede-reason {fields.supersede_reason!r} is not one of restate, revise, reverse"
        )
    if fields.revisit is not None:
        commands.valid_date(fields.revisit)
    superseding = [link for link in links if link.type == "supersedes"]
    if fields.supersede_reason is not None and not superseding:
        raise Invalid("--supersede-reason says how a record supersedes another: pass --supersedes ID too")
    for link in links:
        _check_link(state, record_id, kind, link)


def _check_link(state: State, record_id: str | None, kind: str, link: Link) -> None:
    target = state.entities.get(link.target)
    flag = "--" + link.type
    if target is None:
        raise Invalid(f"{flag} {link.target}: no such record; `self state list --all` lists them")
    if record_id is not None and link.target == record_id:
        raise Invalid(f"{flag} {link.target}: a record cannot name itself")
    if record_id is not None and target.created >= record_id:
        raise Invalid(f"{flag} {link.target}: a relation points only at records created before this one")
    fact = state.ledger.get(link.target)
    target_kind = fact.kind if fact is not None else None
    shown = target_kind or (target.labels[0] if target.labels else "record without a label")
    if link.type in ("supports", "depends-on"):
        if kind != "decision" and link.type == "depends-on":
            raise Invalid(f"--depends-on: only decisions have prerequisites; a {kind} has none")
        if target_kind not in _GROUNDED:
            raise Invalid(f"{flag} {link.target}: it is a {shown}; {link.type} names claims or decisions")
    elif link.type == "answers":
        if target_kind != "question":
            raise Invalid(f"--answers {link.target}: it is a {shown}; only a question is answered")
    elif link.type == "supersedes":
        if fact is None or not fact.current or not target.live:
            word = target.status if not target.live else "not current"
            raise Invalid(f"--supersedes {link.target}: it is {word}; only a live record is superseded")
        if target_kind != kind:
            raise Invalid(f"--supersedes {link.target}: it is a {shown}; a {kind} supersedes only a {kind}")


def _resolve(state: State, prefix: str, flag: str) -> str:
    try:
        return commands.find(state, prefix).id
    except Invalid as exc:
        raise Invalid(f"{flag} {prefix}: {exc}") from exc


def links_for(state: State, kind: str, given: LedgerInput, supersedes: str | None) -> list[Link]:
    """The typed links of a new record, ids resolved from prefixes, in declared order."""
    if given.depends_on and kind != "decision":
        raise Invalid(f"--depends-on: only decisions have prerequisites; a {kind} has none")
    links: list[Link] = []
    for number, members in enumerate(parse_sets(given.supports)):
        resolved = dict.fromkeys(_resolve(state, m, "--supports") for m in members)
        links += [Link("supports", target, number) for target in resolved]
    for flag, link_type, values in (
        ("--depends-on", "depends-on", given.depends_on),
        ("--answers", "answers", given.answers),
    ):
        for target in dict.fromkeys(_resolve(state, v, flag) for v in values):
            links.append(Link(link_type, target))
    if supersedes is not None:
        links.append(Link("supersedes", _resolve(state, supersedes, "--supersedes")))
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
        applies_to=tuple(given.applies_to),
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
            f'--option {text!r} is not "ANSWER=ACTION" (e.g. --option "JSON=parse with the stdlib")'
        )
    return Outcome(answer.strip(), action.strip())


def moot(fields: LedgerFields) -> bool:
    """Every declared answer leads to the same action: asking changes nothing."""
    return len(fields.options) >= 2 and len({_flat(o.action) for o in fields.options}) == 1


def check_question(state: State, prefix: str) -> dict[str, Any]:
    """Whether any answer of a question changes the action (value of information)."""
    entity, fact = _fact(state, prefix)
    if fact.kind != "question":
        raise Invalid(f"{entity.id} is a {fact.kind}; only a question is checked")
    options = entity.ledger.options if entity.ledger is not None else ()
    if len(options) < 2:
        raise Invalid(
            f"{entity.id} declares {len(options)} candidate answer(s): add two or more with "
            f'`self question add "…" --option "ANSWER=ACTION"` (superseding it) to check it'
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
        raise Invalid("--supersede-reason says how a record supersedes another: pass --supersedes ID too")
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
        raise Invalid(f"{entity.id} is not a claim, decision or question")
    return entity, fact


def assess(state: State, clock: Clock, prefix: str, new_state: str, why: str | None) -> list[Event]:
    """Move a claim to another recorded state."""
    entity, fact = _fact(state, prefix)
    if fact.kind != "claim":
        raise Invalid(f"{entity.id} is a {fact.kind}; only a claim is assessed")
    if new_state not in CLAIM_STATES:
        raise Invalid(f"--state {new_state!r} is not one of {', '.join(CLAIM_STATES)}")
    if not fact.current:
        raise Invalid(f"{entity.id} is {entity.status}; assess the record that replaced it")
    if fact.state == new_state:
        raise Invalid(f"{entity.id} is already {new_state}")
    return [commands.event(clock, "entity.assessed", Assessed(entity.id, new_state, why))]


def revoke(state: State, clock: Clock, prefix: str, why: str | None) -> list[Event]:
    """Revoke an adopted decision; it stays in history and what stood on it loses a ground."""
    entity, fact = _fact(state, prefix)
    if fact.kind != "decision":
        raise Invalid(f"{entity.id} is a {fact.kind}; only a decision is revoked")
    if not fact.current:
        raise Invalid(f"{entity.id} is {entity.status}; only a current decision is revoked")
    if fact.state == "revoked":
        raise Invalid(f"{entity.id} is already revoked")
    return [commands.event(clock, "entity.revoked", EntityWhy(entity.id, why))]


def review(state: State, clock: Clock, prefix: str, why: str | None) -> list[Event]:
    """Acknowledge the flags a record owes; they stay cleared until a ground changes again."""
    entity, _ = _fact(state, prefix)
    view = derive(state, [entity.id])[entity.id]
    if not view.review_owed:
        raise Invalid(f"{entity.id} owes no review (its support is {view.support})")
    marks = tuple(ReviewMark(o.ground, o.head, o.reason, o.as_of) for o in view.review_owed)
    return [commands.event(clock, "entity.reviewed", Reviewed(entity.id, marks, why))]


# --- import of a Docket ledger --------------------------------------------------------------

DOCKET_DECISION_STATES = {
    "adopted": "adopted",
    "accepted": "adopted",
    "proposed": "adopted",
    "revoked": "revoked",
    "rejected": "revoked",
    "abandoned": "revoked",
}
_DOCKET_PROVENANCE = ("ts", "session", "author", "branch")


def aliases(state: State) -> dict[str, str]:
    """Imported records: their old id (alias) → their id here."""
    return {e.ledger.alias: e.id for e in state.entities.values() if e.ledger is not None and e.ledger.alias}


def _strs(value: Any, where: str, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise Invalid(f"{where}: {name} is neither a string nor a list of strings")


def import_docket(
    state: State, config: WorkspaceConfig, clock: Clock, rows: Sequence[tuple[int, Mapping[str, Any]]]
) -> list[Event]:
    """Events for the records of a Docket schema-2 ledger (`rows`: line number, record).

    Each record becomes a claim, decision or question with its relations; its Docket id is
    kept as the record's alias (accepted wherever an id is), and a record whose alias is
    already here is skipped, so importing twice adds nothing. Records wait at search
    exposure (pinned ones at index); every write rule applies, and relations must name
    records earlier in the file or already here.
    """
    known = aliases(state)
    scratch = msgspec.structs.replace(state, entities=dict(state.entities), ledger=dict(state.ledger))
    events: list[Event] = []
    for number, raw in rows:
        where = f"line {number}"
        docket_id = raw.get("id")
        kind = raw.get("kind")
        text = raw.get("text")
        if not isinstance(docket_id, str) or not docket_id:
            raise Invalid(f"{where}: a record needs an id")
        if kind not in KINDS:
            raise Invalid(f"{where} ({docket_id}): kind {kind!r} is not claim, decision or question")
        if not isinstance(text, str) or not text.strip():
            raise Invalid(f"{where} ({docket_id}): the text is empty")
        if docket_id in known:
            continue
        new_id = clock.new_id()

        def here(old: str, name: str, docket_id: str = docket_id, where: str = where) -> str:
            if old in known:
                return known[old]
            raise Invalid(f"{where} ({docket_id}): {name} {old} names no record earlier in the ledger")

        links: list[Link] = []
        supports = raw.get("supports") or []
        if not isinstance(supports, list):
            raise Invalid(f"{where} ({docket_id}): supports is not a list of id lists")
        for group, members in enumerate(supports):
            for member in dict.fromkeys(_strs(members, where, "supports")):
                links.append(Link("supports", here(member, "supports"), group))
        for name, link_type in (
            ("depends_on", "depends-on"),
            ("answers", "answers"),
            ("supersedes", "supersedes"),
        ):
            for target in dict.fromkeys(_strs(raw.get(name), where, name)):
                links.append(Link(link_type, here(target, name)))
        recorded = raw.get("state")
        state_word: str | None = None
        revoked = False
        if kind == "claim":
            state_word = recorded if isinstance(recorded, str) else None
        elif kind == "decision" and recorded is not None:
            if recorded not in DOCKET_DECISION_STATES:
                raise Invalid(
                    f"{where} ({docket_id}): decision state {recorded!r} is not one of adopted, revoked"
                )
            revoked = DOCKET_DECISION_STATES[str(recorded)] == "revoked"
        pinned = bool(raw.get("pinned"))
        superseding = any(link.type == "supersedes" for link in links)
        reason = raw.get("supersede_reason")
        fields = LedgerFields(
            state=state_word,
            choice=raw.get("choice") or None,
            alternatives=_strs(raw.get("alternatives"), where, "alternatives"),
            decided_by=raw.get("decided_by") or None,
            supersede_reason=(reason if isinstance(reason, str) else DEFAULT_REASON) if superseding else None,
            applies_to=_strs(raw.get("scope"), where, "scope"),
            evidence=_strs(raw.get("evidence"), where, "evidence"),
            revisit=str(raw["revisit"])[:10] if raw.get("revisit") else None,
            cost_if_wrong=raw.get("cost_if_wrong") or None,
            pinned=pinned,
            alias=docket_id,
        )
        try:
            check_record(scratch, new_id, kind, text, fields, links)
        except Invalid as exc:
            raise Invalid(f"{where} ({docket_id}): {exc}") from exc
        refs: dict[str, object] = {"docket": docket_id}
        refs |= {key: raw[key] for key in _DOCKET_PROVENANCE if isinstance(raw.get(key), str) and raw[key]}
        rationale = raw.get("rationale")
        payload = Assertion(
            entity=new_id,
            text=text.strip(),
            labels=(kind,),
            links=tuple(links),
            exposure="index" if pinned else "search",
            scope="project",
            why=rationale if isinstance(rationale, str) and rationale else None,
            ledger=fields,
        )
        events.append(make(new_id, clock.now, "entity.confirmed", clock.origin, clock.project, payload, refs))
        if revoked:
            events.append(
                commands.event(clock, "entity.revoked", EntityWhy(new_id, "revoked in the Docket ledger"))
            )
        known[docket_id] = new_id
        scratch.entities[new_id] = Entity(
            id=new_id,
            project=clock.project,
            text=text,
            labels=[kind],
            links=links,
            criteria=[],
            covered=[],
            exposure="search",
            priority=None,
            scope="project",
            status="confirmed",
            created=new_id,
            updated=new_id,
            ledger=fields,
        )
        scratch.ledger[new_id] = Fact(kind=kind, state=DEFAULT_STATES[kind], changed=new_id)
        for link in links:
            if link.type == "supersedes":
                old = scratch.entities[link.target]
                scratch.entities[link.target] = msgspec.structs.replace(old, status="superseded")
                scratch.ledger[link.target] = msgspec.structs.replace(
                    scratch.ledger[link.target], current=False
                )
    return events


# --- parallel validity ------------------------------------------------------------------------


def work_fields(
    label: str, reads: Sequence[str], writes: Sequence[str], intends: Sequence[str]
) -> LedgerFields | None:
    """A work unit's declared read, write and intended-outcome sets (None when none is given)."""
    if not (reads or writes or intends):
        return None
    if label != "work":
        raise Invalid("--reads, --writes and --intends belong to work units (`self work add`)")
    for path in (*reads, *writes, *intends):
        if not path.strip() or path.startswith(("/", "~")):
            raise Invalid(f"{path!r}: give a path or glob relative to the checkout, e.g. src/app/*.py")
    return LedgerFields(reads=tuple(reads), writes=tuple(writes), intends=tuple(intends))


_WILD = re.compile(r"[*?\[]")


def overlap(a: str, b: str) -> bool:
    """Whether two paths or globs can name a common path (conservative for two globs: their
    literal heads must be compatible)."""
    import fnmatch

    if a == b:
        return True
    wild_a, wild_b = bool(_WILD.search(a)), bool(_WILD.search(b))
    if not wild_a and not wild_b:
        return (
            a.rstrip("/") == b.rstrip("/")
            or a.startswith(b.rstrip("/") + "/")
            or b.startswith(a.rstrip("/") + "/")
        )
    if not wild_b:
        return fnmatch.fnmatchcase(b, a) or _head(a).startswith(b.rstrip("/") + "/")
    if not wild_a:
        return overlap(b, a)
    head_a, head_b = _head(a), _head(b)
    return head_a.startswith(head_b) or head_b.startswith(head_a)


def _head(glob: str) -> str:
    match = _WILD.search(glob)
    return glob if match is None else glob[: match.start()]


def parallel(state: State, prefixes: Sequence[str]) -> dict[str, Any]:
    """Whether work units commute: no unit writes what another reads or writes.

    Certified only when every unit declared its sets; otherwise each conflicting pair is
    named with the paths and how they conflict (write/write or write/read).
    """
    if len(prefixes) < 2:
        raise Invalid("name two or more work units: `self work parallel ID ID...`")
    units = [commands.find(state, p) for p in prefixes]
    if len({u.id for u in units}) != len(units):
        raise Invalid("a work unit is named twice")
    undeclared = [u.id for u in units if u.ledger is None or not (u.ledger.reads or u.ledger.writes)]
    conflicts: list[dict[str, str]] = []
    for i, a in enumerate(units):
        for b in units[i + 1 :]:
            conflicts += _conflicts(a, b)
    return {
        "units": [u.id for u in units],
        "commute": not conflicts and not undeclared,
        "conflicts": conflicts,
        "undeclared": undeclared,
    }


def _conflicts(a: Entity, b: Entity) -> list[dict[str, str]]:
    fa, fb = a.ledger or LedgerFields(), b.ledger or LedgerFields()
    found: list[dict[str, str]] = []
    for left, right, kind in (
        ((a.id, fa.writes), (b.id, fb.writes), "write/write"),
        ((a.id, fa.writes), (b.id, fb.reads), "write/read"),
        ((b.id, fb.writes), (a.id, fa.reads), "write/read"),
    ):
        for p in left[1]:
            for q in right[1]:
                if overlap(p, q):
                    found.append(
                        {"writer": left[0], "other": right[0], "path": p, "other_path": q, "kind": kind}
                    )
    return found


# --- outcome tracking -----------------------------------------------------------------------


def matches(path: str, declared: str) -> bool:
    """A changed file falls under a declared path or glob (a directory covers its files)."""
    import fnmatch

    return fnmatch.fnmatchcase(path, declared) or path.startswith(declared.rstrip("/") + "/")


def outcome(realized: Iterable[str], intended: Sequence[str]) -> dict[str, list[str]]:
    """Intentional (R ∩ ι), unintentional (R \\ ι), and declared outcomes nothing realized."""
    changed = sorted(set(realized))
    intentional = [p for p in changed if any(matches(p, i) for i in intended)]
    return {
        "intended": list(intended),
        "realized": changed,
        "intentional": intentional,
        "unintentional": [p for p in changed if p not in intentional],
        "unrealized": [i for i in intended if not any(matches(p, i) for p in changed)],
    }


# --- evaluation mining ------------------------------------------------------------------------


def decision_rows(state: State) -> list[dict[str, Any]]:
    """One row per decision: what was chosen over what, its grounds, its derived status and
    its known outcome (standing, revoked, retracted, or superseded with the reason)."""
    views = derive(state)
    rows: list[dict[str, Any]] = []
    for record_id in sorted(views):
        view = views[record_id]
        e = state.entities.get(record_id)
        if view.kind != "decision" or e is None:
            continue
        fact = state.ledger[record_id]
        fields = e.ledger or LedgerFields()
        successor = state.ledger.get(fact.superseded_by) if fact.superseded_by else None
        if fact.retracted:
            known = "retracted"
        elif fact.superseded_by is not None:
            reason = (successor.reason if successor is not None else None) or DEFAULT_REASON
            known = f"superseded: {reason}"
        else:
            known = "revoked" if fact.state == "revoked" else "standing"
        rows.append(
            {
                "id": record_id,
                "project": e.project,
                "text": e.text,
                "choice": fields.choice,
                "alternatives": list(fields.alternatives),
                "decided_by": fields.decided_by,
                "rationale": e.why,
                "state": fact.state,
                "current": fact.current,
                "support": view.support,
                "supports": [list(group) for group in fact.supports],
                "review_owed": [o.ground for o in view.review_owed],
                "depends_on": list(fact.depends_on),
                "blocked_by": list(view.blocked_by),
                "answers": list(fact.answers),
                "outcome": known,
                "superseded_by": fact.superseded_by,
                "created": e.created,
                "changed": fact.changed,
            }
        )
    return rows
