"""The ledger's derived views: current, support (truth maintenance), blocked, resolved.

The fold keeps a `Fact` per claim, decision and question in `State.ledger`; everything here
reads only those facts, so it is a pure function of the event set and comes out the same
from a hot slice of the state as from the whole of it. Nothing derived is ever stored.
Where the seed leaves a rule open, Docket's own reading is the one kept (docs/concepts.md,
"Decisions and why", has the table); a record's `--scope` plays no part here (Docket uses it to choose
what a briefing shows, never to decide what applies).

- current: not superseded, not retracted (a proposal is current; what it does to other
  records, superseding them, waits for its confirmation);
- chains: a cited id is followed through supersessions to the head of its chain; a
  `reverse` on the way loses the ground (the head is still named), a retraction or a
  supersession without successor ends the chain in nothing;
- blocked: an adopted decision with a prerequisite that is not *available*: the head of
  its chain is not a current accepted claim or a current adopted decision that is itself
  unblocked (least fixed point: decisions waiting on each other stay blocked). Support
  plays no part. `blocked_by` names the cited id, the head it came to when that head is
  the trouble, and what blocks a blocked prerequisite;
- applicable (decisions only, Docket's `applicable`): current, adopted and not blocked. A
  retired or revoked decision is not applicable and its `blocked_by` names itself, as
  Docket's does, while `blocked` stays the mark of current adopted decisions that readers
  are shown;
- support: each AND set counts as its weakest ground and a record keeps its best set. A
  ground is lost when reversed, rejected, revoked, retracted or itself unsupported, and
  flagged for a cause of its own (`circular`, `revise`, or its head's state, e.g.
  `unassessed`) or one it inherits (`blocked`, `flagged`: its head is). A decision whose
  prerequisite was revised is flagged too (`revise`). Records only a cycle holds up are
  neither grounded nor withdrawn: `circular`, a flag, not a loss (the least and greatest
  fixed points differ there). `review_owed` lists each flagged ground of every flagged
  set, with the head of its chain, the reason and the event it dates from;
- reviews: a review acknowledges the record's own flags, ground by ground, at the head
  and the date (the last event on the chain) it saw; an inherited flag is never
  acknowledged (it clears when the ground's own does), and a new head or a later event on
  the chain (a further supersession, an assessment) owes the review again;
- resolved: a question is resolved by a current accepted claim or a current unblocked
  adopted decision that answers it (`resolved_by`); superseding the answer reopens it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import TypeVar

import msgspec

from service.core.fold.state import Fact, State
from service.core.ledger.chains import DEFAULT_REASON as DEFAULT_REASON  # re-exported for callers
from service.core.ledger.chains import GROUNDED as GROUNDED
from service.core.ledger.chains import Blockers, Chain, follow

SUPPORT_WORDS = ("unsupported", "flagged", "clean")
LOST, FLAGGED, CLEAN = 0, 1, 2
INHERITED = ("blocked", "flagged")  # flags a ground passes on; a review never takes them
T = TypeVar("T")


class Owed(msgspec.Struct, frozen=True):
    """One flagged ground of a flagged record, not yet acknowledged by a review."""

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
    applicable: bool | None = None
    resolved: bool | None = None
    resolved_by: tuple[str, ...] = ()


class _Ground(msgspec.Struct, frozen=True):
    value: int
    reason: str | None = None
    head: str | None = None
    as_of: str | None = None


class _Deriver:
    def __init__(self, facts: dict[str, Fact]) -> None:
        self.facts = facts
        self.chains: dict[str, Chain] = {}
        self.blocked: dict[str, bool] = {}
        self.level: dict[str, int] = {}
        self.circular: set[str] = set()
        self.marks: dict[str, set[tuple[str, str, str]]] = {}
        self.named: dict[str, list[str]] | None = None

    def chain(self, start: str) -> Chain:
        found = self.chains.get(start)
        if found is None:
            found = self.chains[start] = follow(self.facts, start)
        return found

    def as_of(self, chain: Chain) -> str:
        """The last event that changed the records a chain crosses."""
        return max(self.facts[r].changed for r in chain.path if r in self.facts)

    def pinned(self, record_id: str, ground: str, head: str, as_of: str) -> bool:
        """Whether a review acknowledged this ground at this head, with nothing on its chain
        changed since (the reason is not compared: one review takes every cause of the
        ground's own, as Docket's pin does, and a later change of state is a later event)."""
        marks = self.marks.get(record_id)
        if marks is None:
            reviewed = self.facts[record_id].reviewed
            marks = self.marks[record_id] = {(m.ground, m.head, m.as_of) for m in reviewed}
        return (ground, head, as_of) in marks

    # --- blocked: applicability from prerequisites alone -------------------------------------

    def prerequisite_ok(self, cited: str) -> bool:
        chain = self.chain(cited)
        if chain.head is None or chain.lost is not None:
            return False
        fact = self.facts[chain.head]
        if fact.kind == "claim":
            return fact.state == "accepted"
        return fact.state == "adopted" and not self.blocked.get(chain.head, False)

    def is_blocked(self, fact: Fact) -> bool:
        return not all(self.prerequisite_ok(p) for p in fact.depends_on)

    def solve_blocked(self) -> None:
        """Least fixed point: every adopted decision with prerequisites starts blocked and
        is unblocked once all of them are available."""
        readers: dict[str, set[str]] = {}
        for record_id, fact in self.facts.items():
            if fact.kind == "decision" and fact.state == "adopted" and fact.current and fact.depends_on:
                self.blocked[record_id] = True
                for cited in fact.depends_on:
                    head = self.chain(cited).head
                    if head is not None:
                        readers.setdefault(head, set()).add(record_id)
        _settle(self.blocked, readers, lambda i: self.is_blocked(self.facts[i]))

    def blockers(self, record_id: str) -> list[str]:
        """What blocks a decision: each unavailable prerequisite, then the head its chain
        came to when that head is the trouble, or what blocks that head in turn."""
        if self.named is None:
            self.named = Blockers(self.facts, self.chain).walk()
        return self.named.get(record_id, [])

    # --- support -----------------------------------------------------------------------------

    def ground(self, owner: str, cited: str) -> _Ground:
        chain = self.chain(cited)
        head = chain.head
        if head is None or chain.lost is not None:
            return _Ground(LOST, chain.lost, head)
        fact = self.facts[head]
        if fact.state in ("rejected", "revoked"):
            return _Ground(LOST, fact.state, head)
        level = self.level.get(head, CLEAN)
        if level == LOST:
            return _Ground(LOST, "unsupported", head)
        owned: str | None = None
        if head in self.circular:
            owned = "circular"
        elif chain.revised:
            owned = "revise"
        elif fact.state != ("accepted" if fact.kind == "claim" else "adopted"):
            owned = fact.state
        inherited: str | None = None
        if fact.kind == "decision" and self.blocked.get(head, False):
            inherited = "blocked"
        elif level == FLAGGED and head not in self.circular:
            inherited = "flagged"
        if owned is None and inherited is None:
            return _Ground(CLEAN, None, head)
        as_of = self.as_of(chain)
        if owned is not None and self.pinned(owner, cited, head, as_of):
            owned = None
        reason = owned or inherited
        if reason is None:
            return _Ground(CLEAN, None, head)
        return _Ground(FLAGGED, reason, head, as_of)

    def prerequisites_owed(self, record_id: str) -> list[Owed]:
        """Revised prerequisites not yet reviewed (a reversed one blocks instead)."""
        owed: list[Owed] = []
        for cited in self.facts[record_id].depends_on:
            chain = self.chain(cited)
            if chain.head is None or chain.lost is not None or not chain.revised:
                continue
            as_of = self.as_of(chain)
            if not self.pinned(record_id, cited, chain.head, as_of):
                owed.append(Owed(cited, chain.head, "revise", as_of))
        return owed

    def record_level(self, record_id: str) -> int:
        fact = self.facts[record_id]
        value = CLEAN
        if fact.supports:
            value = max(min(self.ground(record_id, m).value for m in s) for s in fact.supports)
        if fact.depends_on and self.prerequisites_owed(record_id):
            value = min(value, FLAGGED)
        return value

    def solve_support(self) -> None:
        """Docket's two fixed points: what only the least one denies is circular."""
        graded = sorted(
            i for i, f in self.facts.items() if f.kind in GROUNDED and (f.supports or f.depends_on)
        )
        readers: dict[str, set[str]] = {}
        for record_id in graded:
            for cited in (m for s in self.facts[record_id].supports for m in s):
                head = self.chain(cited).head
                if head is not None:
                    readers.setdefault(head, set()).add(record_id)
        low = dict.fromkeys(graded, LOST)
        self.level = low
        _settle(low, readers, self.record_level)
        below = [i for i in graded if low[i] != CLEAN]  # only these can differ: high >= low
        high = dict.fromkeys(graded, CLEAN)
        self.level = high
        _settle(high, readers, self.record_level, below)
        self.circular = {i for i in graded if low[i] != high[i]}
        self.level = {i: FLAGGED if i in self.circular else low[i] for i in graded}
        changed = True
        while changed:  # a review clears a cycle from the records it acknowledged upward
            changed = False
            for record_id in sorted(self.circular):
                if self.record_level(record_id) == CLEAN:
                    self.level[record_id] = CLEAN
                    self.circular.discard(record_id)
                    changed = True

    def solve(self) -> None:
        self.solve_blocked()
        self.solve_support()

    # --- views -------------------------------------------------------------------------------

    def available(self, record_id: str) -> bool:
        """A current accepted claim, or a current adopted decision that is not blocked."""
        fact = self.facts[record_id]
        if not fact.current:
            return False
        if fact.kind == "claim":
            return fact.state == "accepted"
        return fact.kind == "decision" and fact.state == "adopted" and not self.blocked.get(record_id, False)

    def listed(self, record_id: str, value: int) -> tuple[tuple[Owed, ...], tuple[Lost, ...]]:
        fact = self.facts[record_id]
        owed: list[Owed] = []
        lost: list[Lost] = []
        for members in fact.supports if value != CLEAN else ():
            grounds = [(m, self.ground(record_id, m)) for m in members]
            worst = min(g.value for _, g in grounds)
            for member, g in grounds:
                if value == FLAGGED and worst == FLAGGED and g.value == FLAGGED:
                    assert g.reason and g.head and g.as_of
                    item = Owed(member, g.head, g.reason, g.as_of)
                    owed += [item] if item not in owed else []
                elif value == LOST and g.value == LOST:
                    gone = Lost(member, g.reason or "lost", g.head)
                    lost += [gone] if gone not in lost else []
        if value == FLAGGED:
            owed += [o for o in self.prerequisites_owed(record_id) if o not in owed]
        return tuple(owed), tuple(lost)

    def applicability(self, record_id: str, blocked: bool) -> tuple[bool | None, tuple[str, ...]]:
        """Docket's `applicable` and `blocked_by` (None and what blocks it for a record that
        is not a decision): a decision that is retired or not adopted names itself."""
        fact = self.facts[record_id]
        blocked_by = tuple(self.blockers(record_id)) if blocked else ()
        if fact.kind != "decision":
            return None, blocked_by
        if not (fact.current and fact.state == "adopted"):
            return False, (record_id,)
        return not blocked, blocked_by

    def view(self, record_id: str, resolvers: dict[str, list[str]]) -> View:
        fact = self.facts[record_id]
        value = self.level.get(record_id, CLEAN)
        owed, lost = self.listed(record_id, value)
        blocked = self.blocked.get(record_id, False)
        applicable, blocked_by = self.applicability(record_id, blocked)
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
            review_owed=owed,
            lost=lost,
            blocked=blocked,
            blocked_by=blocked_by,
            applicable=applicable,
            resolved=resolved,
            resolved_by=resolved_by,
        )


def _settle(
    values: dict[str, T],
    readers: dict[str, set[str]],
    rule: Callable[[str], T],
    start: Iterable[str] | None = None,
) -> None:
    """Apply `rule` to the keys (of `start`, when only those may be off) until nothing
    changes; a change requeues the key's readers. `rule` must be monotone from the starting
    values (each value moves one way only)."""
    queue = deque(sorted(values if start is None else start))
    queued = set(queue)
    while queue:
        record_id = queue.popleft()
        queued.discard(record_id)
        value = rule(record_id)
        if value == values[record_id]:
            continue
        values[record_id] = value
        for reader in sorted(readers.get(record_id, ())):
            if reader in values and reader not in queued:
                queue.append(reader)
                queued.add(reader)


class Views:
    """The derived views of a state's ledger records, each made when asked for (the ledger is
    solved once): a reader that shows a few records pays for those."""

    def __init__(self, state: State) -> None:
        self.facts = state.ledger
        self._deriver = _Deriver(self.facts)
        self._made: dict[str, View] = {}
        self._resolvers: dict[str, list[str]] = {}
        if not self.facts:
            return
        self._deriver.solve()
        answering = sorted(i for i, fact in self.facts.items() if fact.answers and fact.kind in GROUNDED)
        for record_id in answering:
            for question in self.facts[record_id].answers:
                self._resolvers.setdefault(question, []).append(record_id)

    def __call__(self, record_id: str) -> View:
        """`derive(state, [record_id])[record_id]`."""
        made = self._made.get(record_id)
        if made is None:
            made = self._made[record_id] = self._deriver.view(record_id, self._resolvers)
        return made

    def citing(self) -> set[str]:
        """The records whose views may name another record (grounds owed a review, blockers,
        answers): graded or blocked ones, and questions."""
        found = {i for i, value in self._deriver.level.items() if value != CLEAN}
        found |= {i for i, blocked in self._deriver.blocked.items() if blocked}
        return found | {i for i, fact in self.facts.items() if fact.kind == "question"}


def derive(state: State, only: Iterable[str] | None = None, *, marked: bool = False) -> dict[str, View]:
    """The derived view of every ledger record of `state` (or of the ids in `only`); with
    `marked`, only of those whose support is not clean or that are blocked (what status
    lists: a clean, unblocked record owes nothing and has lost nothing)."""
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
    if marked:  # read off the solved values, which hold only graded and blocking records
        flagged = {i for i, value in deriver.level.items() if value != CLEAN}
        flagged |= {i for i, blocked in deriver.blocked.items() if blocked}
        wanted = sorted(flagged if only is None else flagged.intersection(wanted))
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
        "applicable": view.applicable,
        "resolved": view.resolved,
        "resolved_by": list(view.resolved_by),
    }


def surfaced(current: bool, state: str) -> bool:
    """Whether a reader is shown a record's support: a current accepted claim or adopted
    decision (one in another state already says it is not to be relied on)."""
    return current and state in ("accepted", "adopted")


def owing(state: State, views: dict[str, View] | None = None) -> int:
    """How many shown records owe a review (from the facts alone: a slice counts them too).
    `views` holds those of `owes(state)` when they were derived already."""
    if views is None:
        views = derive(state, owes(state))
    return sum(1 for i in owes(state) if views[i].review_owed and surfaced(views[i].current, views[i].state))


def owes(state: State) -> list[str]:
    """The current records that may owe a review: claims and decisions with grounds or
    prerequisites."""
    return [
        i
        for i, fact in state.ledger.items()
        if fact.current and fact.kind in GROUNDED and (fact.supports or fact.depends_on)
    ]
