"""Where a ledger citation leads: supersession chains to their current head, and the names
of what blocks a decision (`derived` decides whether it is blocked; this names why)."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from service.core.errors import SelfhubError
from service.core.fold.state import Fact

DEFAULT_REASON = "revise"  # a supersession that does not say how flags what stood on it
GROUNDED = frozenset({"claim", "decision"})


class Chain(msgspec.Struct, frozen=True):
    """Where a cited id stands now: the head of its supersession chain (None when the chain
    ends in nothing current), why the ground is lost (`lost`), and whether a revision was
    crossed on the way."""

    head: str | None
    lost: str | None
    revised: bool
    path: tuple[str, ...]


def follow(facts: dict[str, Fact], start: str) -> Chain:
    """The chain of `start` to its current head. A reversal on the way loses the ground
    but the walk goes on, so the head named is the record now in its place."""
    path = [start]
    revised = False
    reversed_ = False
    here = start

    def gone(word: str) -> Chain:
        return Chain(None, "reverse" if reversed_ else word, revised, tuple(path))

    while True:
        fact = facts.get(here)
        if fact is None:  # relations stay within a log: another log's record is not here
            return gone("no such record in this log")
        if fact.kind not in GROUNDED:
            return gone("not a claim or decision")
        if fact.current:
            return Chain(here, "reverse" if reversed_ else None, revised, tuple(path))
        nxt = fact.superseded_by
        if fact.retracted or nxt is None:
            return gone("retracted" if fact.retracted else "superseded without a successor")
        if nxt in path:
            return gone("supersession cycle")
        successor = facts.get(nxt)
        how = (successor.reason if successor is not None else None) or DEFAULT_REASON
        path.append(nxt)
        reversed_ = reversed_ or how == "reverse"
        revised = revised or how == "revise"
        here = nxt


class _Loop(SelfhubError):
    """A prerequisite walk came back to a decision it is still explaining (caught by the walk
    that crossed a supersession; never raised out of `Blockers`)."""


class Blockers:
    """Names what blocks each decision, as Docket names it: decisions are explained in id
    order (the order Docket reads its file), each prerequisite as `[cited, *reasons]`, and a
    result is kept once found. A walk that comes back to a decision still being explained
    through a supersession (a prerequisite resolving back onto its dependent) names the head
    it crossed to alone; one that comes back without any supersession on the way (possible
    here only through relations another tool added) names the decision it came back to."""

    def __init__(self, facts: dict[str, Fact], chain: Callable[[str], Chain]) -> None:
        self.facts = facts
        self.chain = chain
        self.found: dict[str, tuple[bool, list[str]]] = {}
        self.visiting: set[str] = set()
        self.hops = 0

    def walk(self) -> dict[str, list[str]]:
        for record_id in sorted(self.facts):
            if self.facts[record_id].kind == "decision":
                self.check(record_id)
        return {i: names for i, (ok, names) in self.found.items() if not ok}

    def check(self, record_id: str) -> tuple[bool, list[str]]:
        if record_id in self.visiting:
            if self.hops:
                raise _Loop
            return False, [record_id]
        self.visiting.add(record_id)
        try:
            return self._check(record_id)
        finally:
            self.visiting.discard(record_id)

    def _check(self, record_id: str) -> tuple[bool, list[str]]:
        if record_id in self.found:
            return self.found[record_id]
        fact = self.facts[record_id]
        if fact.kind == "claim":
            ok = fact.state == "accepted" and fact.current
            return ok, [] if ok else [record_id]
        if fact.kind != "decision" or fact.state != "adopted" or not fact.current:
            self.found[record_id] = (False, [record_id])
            return self.found[record_id]
        names: list[str] = []
        for cited in fact.depends_on:
            ok, reasons = self.prerequisite(cited)
            if not ok:
                names += [r for r in dict.fromkeys((cited, *reasons)) if r not in names]
        self.found[record_id] = (not names, names)
        return self.found[record_id]

    def prerequisite(self, cited: str) -> tuple[bool, list[str]]:
        chain = self.chain(cited)
        head = chain.head
        if head is None:
            return False, []
        if chain.lost is not None:
            return False, [head]
        if head == cited:
            return self.check(head)
        self.hops += 1
        try:
            return self.check(head)
        except _Loop:
            return False, [head]
        finally:
            self.hops -= 1
