"""The ledger's derived views: current, support (truth maintenance), blocked, resolved.

The fold keeps a `Fact` per claim, decision and question in `State.ledger`; everything here
reads only those facts, so it is a pure function of the event set and comes out the same
from a hot slice of the state as from the whole of it. Nothing derived is ever stored.

- current: not superseded, not retracted (a proposal is current; what it does to other
  records, superseding them, waits for its confirmation);
- applies: a decision without a scope (`--scope`, paths or globs) applies everywhere; one
  with a scope applies to a record without one, or whose scope overlaps its own;
- blocked: an adopted decision with a prerequisite that is not *available* to it, i.e. not
  (the head of its supersession chain is) a current accepted claim, or a current adopted
  decision that is itself neither blocked nor unsupported and applies to it. Chains are
  followed through `restate` and `revise`; a `reverse`, a retraction or a supersession
  without successor ends them;
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
  decision that is neither blocked nor unsupported and applies to it, that answers it
  (`resolved_by`); superseding the answer reopens the question.

An unsupported record is what Docket's automatic retraction would retract, so it neither
resolves a question nor unblocks a decision.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence

import msgspec

from service.model.events import ReviewMark
from service.model.globs import overlap
from service.model.state import Fact, State

DEFAULT_REASON = "revise"  # a supersession that does not say how flags what stood on it
SUPPORT_WORDS = ("unsupported", "flagged", "clean")
LOST, FLAGGED, CLEAN = 0, 1, 2
GROUNDED = frozenset({"claim", "decision"})


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
            if fact is None:  # relations stay within a log: another log's record is not here
                return _Chain(None, LOST, "no such record in this log", tuple(path))
            if fact.kind not in GROUNDED:
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

    def available(self, head: str, to: Fact) -> bool:
        """A current accepted claim, or a current adopted decision neither blocked nor
        unsupported that applies to the record `to`."""
        fact = self.facts[head]
        if not fact.current or self.support.get(head, CLEAN) == LOST:
            return False
        if fact.kind == "claim":
            return fact.state == "accepted"
        return (
            fact.kind == "decision"
            and fact.state == "adopted"
            and not self.blocked.get(head, False)
            and applies(fact.applies_to, to.applies_to)
        )

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
        return any(not self._prerequisite_ok(p, record) for p in record.depends_on)

    def _prerequisite_ok(self, prerequisite: str, record: Fact) -> bool:
        chain = self.chain(prerequisite)
        return chain.head is not None and chain.value != LOST and self.available(chain.head, record)

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
        blocked_by = (
            tuple(p for p in fact.depends_on if not self._prerequisite_ok(p, fact)) if blocked else ()
        )
        resolved: bool | None = None
        resolved_by: tuple[str, ...] = ()
        if fact.kind == "question":
            resolved_by = tuple(a for a in resolvers.get(record_id, ()) if self.available(a, fact))
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


def applies(scope: Sequence[str], to: Sequence[str]) -> bool:
    """A decision's scope covers a record: one of the two has none, or two of their paths or
    globs can name a common path."""
    return not scope or not to or any(overlap(a, b) for a in scope for b in to)


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
    for record_id in sorted(i for i, fact in facts.items() if fact.answers and fact.kind in GROUNDED):
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


def owing(state: State, views: dict[str, View] | None = None) -> int:
    """How many current records owe a review (from the facts alone: a slice counts them too).
    `views` holds those of `owes(state)` when they were derived already."""
    if views is None:
        views = derive(state, owes(state))
    return sum(1 for i in owes(state) if views[i].review_owed)


def owes(state: State) -> list[str]:
    """The current records that may owe a review: those with support sets."""
    return [i for i, fact in state.ledger.items() if fact.supports and fact.current]
