"""The ledger's rules, one small named scenario each: support sets and truth maintenance,
supersession with restate/revise/reverse, blocked decisions, resolved questions, reviews,
cycles, and the refusals of the write rules."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from service.core.commands.commands import AddRequest, Clock
from service.core.commands.config import WorkspaceConfig
from service.core.errors import Invalid
from service.core.events import ids
from service.core.events.events import (
    Assertion,
    EntityWhy,
    Event,
    LedgerFields,
    Link,
    Linked,
    Origin,
    Superseded,
    make,
)
from service.core.fold.fold import fold_all
from service.core.fold.state import State
from service.core.gates import globs
from service.core.interop import exchange
from service.core.ledger import derived, docket, ledger, worksets
from service.core.ledger.derived import View
from service.core.ledger.ledger import LedgerInput

HUMAN = Origin("human", True)
AGENT = Origin("agent", False)
NOW = "2026-11-30T10:00:00.000Z"


class Book:
    """A project log written through the ledger's own commands (validation included)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.n = 0

    def new_id(self) -> str:
        self.n += 1
        return ids.encode((1_800_000_000_000 + 2000 * self.n) << 80 | self.n)

    def clock(self, origin: Origin = HUMAN) -> Clock:
        return Clock(self.new_id, NOW, origin, "app")

    def state(self) -> State:
        return fold_all(self.events)

    def record(
        self,
        kind: str,
        text: str,
        *,
        supersedes: str | None = None,
        proposed: bool = False,
        **given: Any,
    ) -> str:
        for key in ("supports", "depends_on", "answers", "alternatives", "evidence", "applies_to"):
            if isinstance(given.get(key), str):
                given[key] = (given[key],)
        why = given.pop("why", None)
        request = AddRequest(text=text, labels=(kind,), exposure="index", supersedes=supersedes, why=why)
        clock = self.clock(AGENT if proposed else HUMAN)
        events = ledger.add(self.state(), WorkspaceConfig(), clock, request, LedgerInput(**given))
        self.events += events
        payload = msgspec.json.decode(events[0].payload)
        return str(payload["entity"])

    def claim(self, text: str, state: str = "accepted", **given: Any) -> str:
        return self.record("claim", text, state=state, **given)

    def decision(self, text: str, **given: Any) -> str:
        return self.record("decision", text, **given)

    def question(self, text: str, **given: Any) -> str:
        return self.record("question", text, **given)

    def assess(self, record: str, state: str) -> None:
        self.events += ledger.assess(self.state(), self.clock(), record, state, None)

    def revoke(self, record: str) -> None:
        self.events += ledger.revoke(self.state(), self.clock(), record, None)

    def review(self, record: str) -> None:
        self.events += ledger.review(self.state(), self.clock(), record, None)

    def raw(self, kind: str, payload: Any) -> str:
        event = make(self.new_id(), NOW, kind, HUMAN, "app", payload)
        self.events.append(event)
        return event.id

    def view(self, record: str) -> View:
        return derived.derive(self.state())[record]


def owed(view: View) -> list[tuple[str, str, str]]:
    return [(o.ground, o.head, o.reason) for o in view.review_owed]


# --- support and supersession -------------------------------------------------------------


@pytest.fixture
def grounded() -> tuple[Book, str, str]:
    """c1 (accepted); c2 supported by c1."""
    book = Book()
    c1 = book.claim("the API returns JSON")
    c2 = book.claim("clients can parse every response", supports=c1)
    return book, c1, c2


def test_a_record_on_an_accepted_ground_is_clean(grounded: tuple[Book, str, str]) -> None:
    book, _, c2 = grounded
    view = book.view(c2)
    assert (view.support, view.review_owed, view.current) == ("clean", (), True)


def test_restating_the_ground_leaves_the_dependent_clean(grounded: tuple[Book, str, str]) -> None:
    book, c1, c2 = grounded
    book.claim("the API answers in JSON", supersedes=c1, supersede_reason="restate")
    assert book.view(c1).current is False
    assert (book.view(c2).support, owed(book.view(c2))) == ("clean", [])


def test_revising_the_ground_flags_the_dependent_with_review_owed(grounded: tuple[Book, str, str]) -> None:
    book, c1, c2 = grounded
    c3 = book.claim("the API returns JSON with a schema", supersedes=c1, supersede_reason="revise")
    view = book.view(c2)
    assert view.support == "flagged"
    assert owed(view) == [(c1, c3, "revise")]


def test_reversing_the_ground_leaves_the_dependent_unsupported(grounded: tuple[Book, str, str]) -> None:
    book, c1, c2 = grounded
    c3 = book.claim("the API does not return JSON", supersedes=c1, supersede_reason="reverse")
    view = book.view(c2)
    assert view.support == "unsupported"
    assert [(x.ground, x.reason, x.head) for x in view.lost] == [(c1, "reverse", c3)]


def test_a_supersession_without_a_reason_counts_as_a_revision(grounded: tuple[Book, str, str]) -> None:
    book, c1, c2 = grounded
    c3 = book.claim("the API returns JSON, mostly", supersedes=c1)
    assert book.state().ledger[c3].reason == "revise"
    assert owed(book.view(c2)) == [(c1, c3, "revise")]


def test_an_alternative_set_survives_the_reversal_of_one_ground() -> None:
    book = Book()
    c1 = book.claim("the staging run passed")
    c2 = book.claim("the unit tests pass")
    c4 = book.claim("the build is releasable", supports=(c1, c2))
    assert book.state().ledger[c4].supports == ((c1,), (c2,))
    book.claim("the staging run failed", supersedes=c1, supersede_reason="reverse")
    assert book.view(c4).support == "clean"


def test_an_and_set_counts_as_its_weakest_ground() -> None:
    book = Book()
    strong = book.claim("the tests pass")
    weak = book.claim("the docs are current", state="unassessed")
    both = book.claim("ready to release", supports=f"{strong},{weak}")
    assert book.state().ledger[both].supports == ((strong, weak),)
    assert owed(book.view(both)) == [(weak, weak, "unassessed")]
    book.assess(weak, "disputed")
    assert owed(book.view(both)) == [(weak, weak, "disputed")]
    book.assess(weak, "rejected")
    view = book.view(both)
    assert view.support == "unsupported"
    assert [(x.ground, x.reason) for x in view.lost] == [(weak, "rejected")]


def test_a_record_keeps_its_best_set() -> None:
    book = Book()
    rejected = book.claim("it was benchmarked", state="rejected")
    unassessed = book.claim("users asked for it", state="unassessed")
    accepted = book.claim("the contract requires it")
    flagged = book.claim("we build it", supports=(rejected, unassessed))
    assert book.view(flagged).support == "flagged"
    assert owed(book.view(flagged)) == [(unassessed, unassessed, "unassessed")]
    clean = book.claim("we build it soon", supports=(unassessed, accepted))
    assert book.view(clean).support == "clean"


def test_grounds_lost_and_flagged_by_kind_and_state() -> None:
    book = Book()
    revoked = book.decision("use the v1 schema")
    book.revoke(revoked)
    on_revoked = book.claim("v1 clients keep working", supports=revoked)
    assert [x.reason for x in book.view(on_revoked).lost] == ["revoked"]
    missing = book.claim("the vendor answers within a day", state="unassessed")
    waiting = book.decision("integrate the vendor API", depends_on=missing)
    on_blocked = book.claim("the integration lands this quarter", supports=waiting)
    assert book.view(waiting).blocked_by == (missing,)
    assert owed(book.view(on_blocked)) == [(waiting, waiting, "blocked")]
    book.assess(missing, "accepted")
    assert book.view(on_blocked).support == "clean"


def test_loss_and_flags_both_propagate() -> None:
    """Docket's reading: a flagged ground flags what stands on it (`flagged`)."""
    book = Book()
    c1 = book.claim("the disk is fast")
    c2 = book.claim("the fold fits in a second", supports=c1)
    c3 = book.claim("context stays under a second", supports=c2)
    book.assess(c1, "unassessed")
    assert (book.view(c2).support, book.view(c3).support) == ("flagged", "flagged")
    assert owed(book.view(c3)) == [(c2, c2, "flagged")]
    book.assess(c1, "rejected")
    assert (book.view(c2).support, book.view(c3).support) == ("unsupported", "unsupported")
    assert [(x.ground, x.reason) for x in book.view(c3).lost] == [(c2, "unsupported")]


def test_a_retracted_ground_is_lost(grounded: tuple[Book, str, str]) -> None:
    book, c1, c2 = grounded
    book.raw("entity.retracted", EntityWhy(c1, "wrong"))
    assert [(x.ground, x.reason) for x in book.view(c2).lost] == [(c1, "retracted")]


def test_a_ground_outside_this_log_is_lost() -> None:
    """Relations stay within one log; one that another tool wrote to a record elsewhere
    names nothing here."""
    book = Book()
    c = book.claim("pages load fast")
    elsewhere = "01zzzzzzzzzzzzzzzzzzzzzzzz"
    book.raw("entity.linked", Linked(c, Link("supports", elsewhere, 0)))
    assert [(x.ground, x.reason) for x in book.view(c).lost] == [(elsewhere, "no such record in this log")]


def test_restated_chains_are_followed_to_their_head(grounded: tuple[Book, str, str]) -> None:
    book, c1, c2 = grounded
    c3 = book.claim("the API answers in JSON", supersedes=c1, supersede_reason="restate")
    c4 = book.claim("the API answers in JSON with a schema", supersedes=c3, supersede_reason="revise")
    assert owed(book.view(c2)) == [(c1, c4, "revise")]
    book.assess(c4, "rejected")
    assert [(x.ground, x.reason, x.head) for x in book.view(c2).lost] == [(c1, "rejected", c4)]


def test_a_proposed_supersession_takes_effect_when_confirmed(grounded: tuple[Book, str, str]) -> None:
    book, c1, c2 = grounded
    c3 = book.claim("the API is XML now", supersedes=c1, supersede_reason="reverse", proposed=True)
    assert book.view(c2).support == "clean"
    book.raw("entity.confirmed", Assertion(entity=c3))
    assert book.view(c2).support == "unsupported"


# --- reviews ---------------------------------------------------------------------------------


def test_a_review_clears_a_flag_until_the_ground_changes_again(grounded: tuple[Book, str, str]) -> None:
    book, c1, c2 = grounded
    c3 = book.claim("the API returns JSON with a schema", supersedes=c1, supersede_reason="revise")
    book.review(c2)
    assert (book.view(c2).support, book.view(c2).review_owed) == ("clean", ())
    with pytest.raises(Invalid, match="owes no review"):
        book.review(c2)
    book.assess(c3, "disputed")  # the head changed: the revision is owed again, and the dispute
    assert owed(book.view(c2)) == [(c1, c3, "revise")]
    book.review(c2)
    c4 = book.claim("the API returns JSON with schema v2", supersedes=c3, supersede_reason="revise")
    assert owed(book.view(c2)) == [(c1, c4, "revise")]


def test_a_review_does_not_clear_a_lost_ground(grounded: tuple[Book, str, str]) -> None:
    book, c1, c2 = grounded
    book.assess(c1, "rejected")
    with pytest.raises(Invalid, match="owes no review"):
        book.review(c2)
    assert book.view(c2).support == "unsupported"


def test_reviewing_again_after_the_same_state_returns() -> None:
    book = Book()
    c1 = book.claim("the cache is warm", state="unassessed")
    c2 = book.claim("context is fast", supports=c1)
    book.review(c2)
    assert book.view(c2).support == "clean"
    book.assess(c1, "accepted")
    book.assess(c1, "unassessed")  # the same reason, a later change: owed again
    assert owed(book.view(c2)) == [(c1, c1, "unassessed")]


# --- blocked decisions -----------------------------------------------------------------------


def test_a_decision_on_an_unaccepted_claim_is_blocked() -> None:
    book = Book()
    c = book.claim("the license allows it", state="unassessed")
    d = book.decision("vendor the library", depends_on=c)
    view = book.view(d)
    assert (view.blocked, view.blocked_by, view.state) == (True, (c,), "adopted")
    book.assess(c, "accepted")
    assert book.view(d).blocked is False


def test_blocking_follows_supersession_chains() -> None:
    book = Book()
    c1 = book.claim("the license allows it")
    d = book.decision("vendor the library", depends_on=c1)
    c2 = book.claim("the license allows it with attribution", supersedes=c1, supersede_reason="revise")
    assert (book.view(d).blocked, book.view(d).support) == (False, "flagged")
    book.assess(c2, "disputed")
    assert book.view(d).blocked_by == (c1, c2)
    c3 = book.claim("the license forbids it", supersedes=c2, supersede_reason="reverse")
    assert book.view(d).blocked_by == (c1, c3)


def test_blocking_by_decisions_revoked_or_blocked() -> None:
    book = Book()
    base = book.decision("use postgres")
    d = book.decision("use postgres json columns", depends_on=base)
    assert book.view(d).blocked is False
    book.revoke(base)
    assert book.view(d).blocked_by == (base,)
    d2 = book.decision("ship the json api", depends_on=d)
    assert book.view(d2).blocked_by == (d, base)


def test_a_revoked_decision_is_not_blocked() -> None:
    book = Book()
    c = book.claim("the budget is approved", state="disputed")
    d = book.decision("hire a contractor", depends_on=c)
    book.revoke(d)
    assert (book.view(d).blocked, book.view(d).state) == (False, "revoked")


# --- resolved questions ----------------------------------------------------------------------


def test_a_question_answered_by_an_accepted_claim_is_resolved_and_reopens_when_superseded() -> None:
    book = Book()
    q = book.question("which wire format do clients get?")
    assert (book.view(q).resolved, book.view(q).resolved_by) == (False, ())
    c = book.claim("clients get JSON", answers=q)
    assert (book.view(q).resolved, book.view(q).resolved_by) == (True, (c,))
    c2 = book.claim("clients get JSON or CBOR", supersedes=c, supersede_reason="revise")
    assert book.view(q).resolved is False
    book.claim("clients get JSON, CBOR on request", supersedes=c2, supersede_reason="restate", answers=q)
    assert book.view(q).resolved is True


def test_what_resolves_a_question() -> None:
    book = Book()
    q = book.question("which database?")
    book.claim("postgres, probably", state="unassessed", answers=q)
    assert book.view(q).resolved is False
    d = book.decision("use postgres", answers=q)
    assert book.view(q).resolved_by == (d,)
    book.revoke(d)
    assert book.view(q).resolved is False
    c = book.claim("the ops team runs postgres", state="disputed")
    blocked = book.decision("use managed postgres", depends_on=c, answers=q)
    assert book.view(blocked).blocked and book.view(q).resolved is False
    book.assess(c, "accepted")
    assert book.view(q).resolved_by == (blocked,)


# --- readings of the rules -------------------------------------------------------------------


def test_a_retracted_answer_reopens_its_question() -> None:
    book = Book()
    q = book.question("which database?")
    c = book.claim("postgres is the database", answers=q)
    assert book.view(q).resolved is True
    book.raw("entity.retracted", EntityWhy(c, "wrong"))
    assert book.view(q).resolved is False


def test_a_supersession_another_tool_wrote_without_a_reason_flags_too() -> None:
    book = Book()
    c1 = book.claim("the API returns JSON")
    c2 = book.claim("clients can parse every response", supports=c1)
    c3 = book.claim("the API returns JSON or CBOR")
    book.raw("entity.superseded", Superseded(c1, by=c3))
    assert owed(book.view(c2)) == [(c1, c3, "revise")]


def test_a_proposal_is_current_until_withdrawn() -> None:
    """A proposal counts (current is: not superseded, not retracted); only what it does to
    other records, superseding them, waits for its confirmation."""
    book = Book()
    q = book.question("which database?")
    c = book.claim("postgres is the database", answers=q, proposed=True)
    assert (book.view(c).current, book.view(q).resolved_by) == (True, (c,))
    d = book.decision("use postgres json columns", depends_on=c, proposed=True)
    assert book.view(d).blocked is False
    book.raw("entity.retracted", EntityWhy(c, "withdrawn"))
    assert (book.view(q).resolved, book.view(d).blocked_by) == (False, (c,))


# --- cycles ------------------------------------------------------------------------------------


def test_a_cycle_with_an_outside_ground_is_supported() -> None:
    book = Book()
    outside = book.claim("the spec says so")
    a = book.claim("a holds", state="accepted")
    b = book.claim("b holds", supports=a)
    # a second relation, written by another tool: a stands on b, or on the outside ground
    book.raw("entity.linked", Linked(a, Link("supports", b, 0)))
    assert (book.view(a).support, book.view(b).support) == ("flagged", "flagged")
    book.raw("entity.linked", Linked(a, Link("supports", outside, 1)))
    assert (book.view(a).support, book.view(b).support) == ("clean", "clean")


def test_decisions_waiting_on_each_other_stay_blocked() -> None:
    book = Book()
    d1 = book.decision("ship the server")
    d2 = book.decision("ship the client", depends_on=d1)
    book.raw("entity.linked", Linked(d1, Link("depends-on", d2)))
    # explained in id order, as Docket reads its file: d1 waits on d2, which came back to d1
    assert (book.view(d1).blocked_by, book.view(d2).blocked_by) == ((d2, d1), (d1,))


def test_a_supersession_cycle_ends_the_chain() -> None:
    book = Book()
    c1 = book.claim("one")
    c2 = book.claim("two", supports=c1)
    c3 = book.claim("three")
    book.raw("entity.superseded", Superseded(c1, by=c3))
    book.raw("entity.superseded", Superseded(c3, by=c1))
    assert [(x.ground, x.reason) for x in book.view(c2).lost] == [(c1, "supersession cycle")]


# --- write rules -------------------------------------------------------------------------------


@pytest.fixture
def book() -> Book:
    return Book()


def test_relations_name_existing_records(book: Book) -> None:
    with pytest.raises(Invalid, match="supports 01zz") as missing:
        book.claim("x holds", supports="01zz")
    assert (missing.value.code, missing.value.field) == ("not-found", "supports")
    with pytest.raises(Invalid, match="supports") as empty:
        book.claim("x holds", supports=" , ")
    assert empty.value.field == "supports"


def test_supports_and_depends_on_name_claims_or_decisions(book: Book) -> None:
    q = book.question("why?")
    goal = book.record("goal", "ship it")
    with pytest.raises(Invalid, match="it is a question; supports names claims or decisions"):
        book.claim("x holds", supports=q)
    with pytest.raises(Invalid, match="it is a goal; depends-on names claims or decisions"):
        book.decision("do x", depends_on=goal)


def test_answers_names_a_question(book: Book) -> None:
    c = book.claim("x holds")
    with pytest.raises(Invalid, match="only a question is answered"):
        book.claim("y holds", answers=c)


def test_only_decisions_have_prerequisites(book: Book) -> None:
    c = book.claim("x holds")
    with pytest.raises(Invalid, match="only decisions have prerequisites"):
        book.claim("y holds", depends_on=c)
    with pytest.raises(Invalid, match="only decisions have prerequisites"):
        book.question("z?", depends_on=c)


def test_supersedes_names_a_live_record_of_the_same_kind(book: Book) -> None:
    c = book.claim("x holds")
    d = book.decision("do x")
    with pytest.raises(Invalid, match="a claim supersedes only a claim"):
        book.claim("y holds", supersedes=d)
    book.claim("x holds, mostly", supersedes=c)
    with pytest.raises(Invalid, match="it is superseded; only a live record is superseded"):
        book.claim("x holds, sometimes", supersedes=c)
    with pytest.raises(Invalid, match="restate, revise, reverse"):
        book.decision("do y", supersedes=d, supersede_reason="rewrite")
    with pytest.raises(Invalid, match="pass supersedes ID too") as alone:
        book.decision("do y", supersede_reason="restate")
    assert alone.value.fields == ("supersede_reason", "supersedes")


@pytest.mark.parametrize("kind", ["claim", "decision"])
def test_a_claim_or_decision_phrased_as_a_question_is_refused(book: Book, kind: str) -> None:
    with pytest.raises(Invalid, match="phrased as a question"):
        book.record(kind, "should we cache the fold?  ")
    book.question("should we cache the fold?")


def test_an_alternative_equal_to_the_choice_is_refused(book: Book) -> None:
    with pytest.raises(Invalid, match="is the choice itself"):
        book.decision("pick a store", choice="SQLite", alternatives=("postgres", " sqlite "))
    with pytest.raises(Invalid, match="listed twice"):
        book.decision("pick a store", choice="sqlite", alternatives=("postgres", "Postgres"))
    with pytest.raises(Invalid, match="belongs to decisions"):
        book.claim("sqlite is enough", choice="sqlite")


def test_states_and_dates_are_checked(book: Book) -> None:
    with pytest.raises(Invalid, match=r"unassessed \| accepted"):
        book.claim("x holds", state="true")
    with pytest.raises(Invalid, match="is not a date"):
        book.claim("x holds", revisit="soon")
    c = book.claim("x holds")
    with pytest.raises(Invalid, match="already accepted"):
        book.assess(c, "accepted")
    d = book.decision("do x")
    with pytest.raises(Invalid, match="only a claim is assessed"):
        book.assess(d, "accepted")
    book.revoke(d)
    with pytest.raises(Invalid, match="already revoked"):
        book.revoke(d)
    with pytest.raises(Invalid, match="only a decision is revoked"):
        book.revoke(c)
    with pytest.raises(
        Invalid, match="applies_to '~/src': give a path or glob relative to the checkout"
    ) as where:
        book.decision("do y", applies_to="~/src")
    assert where.value.field == "applies_to"


def test_relations_point_only_at_earlier_records_never_at_themselves(book: Book) -> None:
    c = book.claim("x holds")
    state = book.state()
    fields = LedgerFields()
    with pytest.raises(Invalid, match="cannot name itself"):
        ledger.check_record(state, c, "claim", "x", fields, [Link("supports", c, 0)])
    earlier = ids.encode(1 << 80)
    with pytest.raises(Invalid, match="created before this one"):
        ledger.check_record(state, earlier, "claim", "y", fields, [Link("supports", c, 0)])


def test_ledger_flags_on_other_records_are_refused(book: Book) -> None:
    with pytest.raises(Invalid, match="belong to claims, decisions and questions"):
        book.record("goal", "ship it", pinned=True)


def test_pin_places_a_record_at_full_exposure(book: Book) -> None:
    c = book.claim("never force-push main", pinned=True)
    entity = book.state().entities[c]
    assert entity.exposure == "full" and entity.ledger is not None and entity.ledger.pinned


def test_recorded_fields_round_trip(book: Book) -> None:
    c = book.claim("the API returns JSON")
    q = book.question("which format?")
    d = book.decision(
        "parse with the stdlib",
        choice="stdlib json",
        alternatives=("orjson", "ujson"),
        decided_by="alice",
        supports=c,
        answers=q,
        applies_to="src/client/**",
        evidence="docs/api.md",
        revisit="2027-01-31",
        cost_if_wrong="a slower client",
        why="no new dependency",
    )
    state = book.state()
    row = ledger.record_row(state.entities[d], state.ledger[d])
    assert row == {
        "choice": "stdlib json",
        "alternatives": ["orjson", "ujson"],
        "decided_by": "alice",
        "supports": [[c]],
        "depends_on": [],
        "answers": [q],
        "supersede_reason": None,
        "applies_to": ["src/client/**"],
        "rationale": "no new dependency",
        "evidence": ["docs/api.md"],
        "revisit": "2027-01-31",
        "cost_if_wrong": "a slower client",
        "pinned": False,
        "alias": None,
        "source": None,
        "options": [],
        "moot": None,
    }


# --- backward compatibility ------------------------------------------------------------------


def test_events_without_ledger_fields_keep_their_bytes() -> None:
    plain = Assertion(entity="e1", text="x", labels=("decision",), links=(Link("supersedes", "e0"),))
    encoded = msgspec.json.encode(plain)
    assert b"ledger" not in encoded and b'"set"' not in encoded
    assert encoded == (
        b'{"entity":"e1","text":"x","labels":["decision"],"links":[{"type":"supersedes","target":"e0"}]}'
    )


def test_legacy_decisions_are_adopted_ledger_records() -> None:
    from tests.support.builders import Log

    log = Log()
    d = log.add("decision.confirmed", b'{"text":"use git"}')
    state = log.state()
    assert state.ledger[d].kind == "decision" and state.ledger[d].state == "adopted"
    assert derived.derive(state)[d].support == "clean"


def test_signals_for_ledger_events_on_the_wrong_record() -> None:
    book = Book()
    d = book.decision("do x")
    book.raw("entity.assessed", msgspec.Raw(b'{"entity":"%s","state":"accepted"}' % d.encode()))
    state = book.state()
    assert [s.kind for s in state.signals] == ["not-a-claim"]
    assert state.ledger[d].state == "adopted"


def test_derive_over_an_empty_ledger() -> None:
    assert derived.derive(State()) == {}


# --- import of a Docket ledger -----------------------------------------------------------------

DOCKET = [
    {"id": "c1", "kind": "claim", "text": "the API returns JSON", "state": "accepted", "branch": "main"},
    {"id": "q2", "kind": "question", "text": "which format?", "state": "open"},
    {"id": "d3", "kind": "decision", "text": "use the stdlib", "supports": [["c1"]], "answers": ["q2"]},
    {
        "id": "c4",
        "kind": "claim",
        "text": "the API returns JSON with a schema",
        "state": "accepted",
        "supersedes": ["c1"],
    },
    {
        "id": "d5",
        "kind": "decision",
        "text": "ship v1",
        "state": "revoked",
        "depends_on": ["d3"],
        "pinned": True,
    },
]


def imported(book: Book, rows: list[dict[str, Any]], config: WorkspaceConfig | None = None) -> list[Event]:
    read = docket.read(list(enumerate(rows, 1)))
    events, _ = exchange.import_docket(book.state(), config or WorkspaceConfig(), book.clock(), read)
    book.events += events
    return events


def test_a_docket_ledger_maps_to_records_with_aliases(book: Book) -> None:
    events = imported(book, DOCKET)
    assert [e.type for e in events] == ["entity.confirmed"] * 5 + ["entity.revoked"]
    state = book.state()
    known = ledger.aliases(state)
    assert sorted(known) == ["c1", "c4", "d3", "d5", "q2"]
    views = derived.derive(state)
    assert state.ledger[known["d3"]].supports == ((known["c1"],),)
    assert owed(views[known["d3"]]) == [(known["c1"], known["c4"], "revise")]
    assert views[known["q2"]].resolved_by == (known["d3"],)
    assert views[known["d5"]].state == "revoked"
    assert state.entities[known["d5"]].exposure == "full"  # pinned: placed as `--pin` places
    assert events[0].refs == {"docket": "c1", "docket_ledger": docket.identity(DOCKET[0]), "branch": "main"}
    assert ledger.commands.find(state, "d3").id == known["d3"]
    assert imported(book, DOCKET) == []  # importing again adds nothing


@pytest.mark.parametrize(
    ("rows", "says"),
    [
        ([{"id": "c1", "kind": "note", "text": "x"}], "is not claim, decision or question"),
        ([{"id": "c1", "kind": "claim", "text": "x", "supports": [["c9"]]}], "c9 names no record earlier"),
        ([{"id": "c1", "kind": "claim", "text": "x", "state": "true"}], "claim state 'true' is not one of"),
        ([{"id": "d1", "kind": "decision", "text": "x", "state": "maybe"}], "is not one of adopted, revoked"),
        ([{"kind": "claim", "text": "x"}], "a claim is cN"),
    ],
)
def test_a_bad_docket_record_is_refused_with_its_line(
    book: Book, rows: list[dict[str, Any]], says: str
) -> None:
    with pytest.raises(Invalid, match="line 1") as caught:
        imported(book, rows)
    assert says in str(caught.value)


# --- question pruning ----------------------------------------------------------------------------


def test_a_question_whose_answers_all_lead_to_one_action_is_moot(book: Book) -> None:
    from service.core.projections.context import build_context, render_agent

    moot = book.question(
        "json or cbor?", options=("json=parse with the stdlib", "cbor=Parse with  the stdlib")
    )
    live = book.question("sqlite or postgres?", options=("sqlite=embed it", "postgres=run a server"))
    state = book.state()
    assert ledger.check_question(state, moot)["moot"] is True
    doc = ledger.check_question(state, live)
    assert (doc["moot"], doc["changes_action"], doc["actions"]) == (False, True, 2)
    text = render_agent(build_context("app", state, [], WorkspaceConfig(), "2026-11-30", {}, 0))
    assert "json or cbor?" not in text  # pruned: asking it changes nothing
    assert "sqlite or postgres? (unresolved)" in text


def test_question_options_are_checked(book: Book) -> None:
    with pytest.raises(Invalid, match="ANSWER=ACTION"):
        book.question("which?", options=("json",))
    with pytest.raises(Invalid, match="listed twice"):
        book.question("which?", options=("json=a", "JSON=b"))
    with pytest.raises(Invalid, match="belongs to questions"):
        book.claim("json is fine", options=("a=b",))
    q = book.question("which?", options=("json=a",))
    with pytest.raises(Invalid, match="declares 1 candidate answer"):
        ledger.check_question(book.state(), q)
    c = book.claim("x holds")
    with pytest.raises(Invalid, match="only a question is checked"):
        ledger.check_question(book.state(), c)


# --- parallel validity -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "meet"),
    [
        ("src/app.py", "src/app.py", True),
        ("src/app.py", "src/lib.py", False),
        ("src", "src/app.py", True),
        ("src/*.py", "src/app.py", True),
        ("src/*.py", "docs/app.py", False),
        ("src/api/**", "src/api/v1/models.py", True),
        ("src/api/*.py", "src/client/*.py", False),
        ("src/**", "src/api/*.py", True),
        ("docs", "docs/*.md", True),
    ],
)
def test_paths_and_globs_overlap(a: str, b: str, meet: bool) -> None:
    assert globs.overlap(a, b) is meet
    assert globs.overlap(b, a) is meet


def work(book: Book, text: str, reads: tuple[str, ...] = (), writes: tuple[str, ...] = ()) -> str:
    request = AddRequest(text=text, labels=("work",), ledger=worksets.work_fields("work", reads, writes, ()))
    events = ledger.add(book.state(), WorkspaceConfig(), book.clock(), request, LedgerInput())
    book.events += events
    return events[0].id


def test_work_units_commute_only_when_no_one_writes_what_another_touches(book: Book) -> None:
    api = work(book, "the api", reads=("docs/**",), writes=("src/api/*.py",))
    client = work(book, "the client", reads=("src/api/models.py",), writes=("src/client/**",))
    docs = work(book, "the docs", writes=("README.md",))
    bare = work(book, "something")
    state = book.state()
    assert worksets.parallel(state, [api, docs])["commute"] is True
    doc = worksets.parallel(state, [api, client, docs])
    assert doc["commute"] is False
    assert doc["conflicts"] == [
        {
            "writer": api,
            "other": client,
            "path": "src/api/*.py",
            "other_path": "src/api/models.py",
            "kind": "write/read",
        }
    ]
    both = worksets.parallel(state, [docs, bare])
    assert (both["commute"], both["undeclared"]) == (False, [bare])
    with pytest.raises(Invalid, match="two or more"):
        worksets.parallel(state, [api])
    with pytest.raises(Invalid, match="belong to work units"):
        worksets.work_fields("goal", ("a",), (), ())
    with pytest.raises(Invalid, match="relative to the checkout"):
        worksets.work_fields("work", ("/etc/passwd",), (), ())


# --- outcome tracking ------------------------------------------------------------------------------


def test_outcomes_split_into_intentional_and_unintentional() -> None:
    doc = worksets.outcome(
        ["src/api/x.py", "README.md", "src/api/y.py", "docs/a.md"], ["src/api/**", "docs", "CHANGES"]
    )
    assert doc["intentional"] == ["docs/a.md", "src/api/x.py", "src/api/y.py"]
    assert doc["unintentional"] == ["README.md"]
    assert doc["unrealized"] == ["CHANGES"]
    assert worksets.outcome([], [])["realized"] == []


def test_selfhubs_own_files_are_never_outcomes() -> None:
    doc = worksets.outcome([".selfhub", "app/.selfhub", "src/a.py"], ["**"])
    assert doc["realized"] == doc["intentional"] == ["src/a.py"] and doc["unintentional"] == []
    assert worksets.outcome([".selfhub"], [])["unintentional"] == []


# --- evaluation mining -----------------------------------------------------------------------------


def test_decision_rows_carry_grounds_status_and_known_outcome(book: Book) -> None:
    c = book.claim("the API returns JSON")
    d1 = book.decision("parse with the stdlib", choice="stdlib", alternatives=("orjson",), supports=c)
    d2 = book.decision("cache responses")
    book.decision("cache responses for a minute", supersedes=d2, supersede_reason="revise")
    d4 = book.decision("ship v1")
    book.revoke(d4)
    rows = {r["id"]: r for r in exchange.decision_rows(book.state())}
    assert [r["outcome"] for r in rows.values()] == ["standing", "superseded: revise", "standing", "revoked"]
    assert rows[d1]["supports"] == [[c]] and rows[d1]["support"] == "clean"
    assert rows[d1]["choice"] == "stdlib" and rows[d1]["alternatives"] == ["orjson"]
    assert c not in rows


def test_decision_rows_say_which_decisions_are_applicable(book: Book) -> None:
    """Docket's `applicable` on every row: current, adopted and not blocked — the decisions
    evaluation mining takes as labelled examples."""
    c = book.claim("the vendor ships a wheel", state="disputed")
    standing = book.decision("pin the vendor's version")
    blocked = book.decision("vendor the library", depends_on=c)
    old = book.decision("cache responses")
    book.decision("cache responses for a minute", supersedes=old, supersede_reason="revise")
    revoked = book.decision("ship v1")
    book.revoke(revoked)
    rows = {r["id"]: r for r in exchange.decision_rows(book.state())}
    applicable = {record: row["applicable"] for record, row in rows.items()}
    assert applicable[standing] is True
    assert (applicable[blocked], rows[blocked]["blocked"]) == (False, True)
    assert applicable[old] is False and applicable[revoked] is False
