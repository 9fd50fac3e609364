"""The ledger's derived views where the seed leaves a rule open and Docket's own code
decides: applicability from prerequisites alone (scope only selects), flags passing up a
support chain, revised prerequisites owing a review, cycles flagged `circular`, unsupported
records still resolving and unblocking, every flagged set listed, blockers named down to the
head, Docket's reason words, reviews pinning only a record's own flags; and question
pruning (a moot question leaves context, status lists it)."""

from __future__ import annotations

import pytest

from service.core.commands.config import WorkspaceConfig
from service.core.errors import Invalid
from service.core.events.events import EntityWhy, Link, Linked, Reviewed, ReviewMark
from service.core.projections.context import build_context, render_agent
from service.core.projections.status import build_status, render_status
from service.core.projections.views import ledger_extras, ledger_words
from tests.unit.test_ledger import Book, owed

# --- scope selects, it does not decide applicability ----------------------------------------


def test_a_decision_resolves_a_question_whatever_their_scopes() -> None:
    book = Book()
    q = book.question("how are the docs built?", applies_to="docs/**")
    d = book.decision("build everything with make", applies_to="src/api/**", answers=q)
    assert (book.view(q).resolved, book.view(q).resolved_by) == (True, (d,))


def test_a_healthy_prerequisite_with_another_scope_does_not_block() -> None:
    book = Book()
    docs = book.decision("use the shared http client", applies_to="docs/**")
    d = book.decision("retry idempotent calls", applies_to="src/**", depends_on=docs)
    assert (book.view(d).blocked, book.view(d).blocked_by) == (False, ())


# --- flags pass up the chain ----------------------------------------------------------------


def transitive() -> tuple[Book, str, str, str, str]:
    """c1; c2 on c1; c3 on c2; c4 revises c1."""
    book = Book()
    c1 = book.claim("the disk is fast")
    c2 = book.claim("the fold fits in a second", supports=c1)
    c3 = book.claim("context stays under a second", supports=c2)
    c4 = book.claim("the disk is fast for reads", supersedes=c1, supersede_reason="revise")
    return book, c1, c2, c3, c4


def test_a_flag_passes_up_the_chain() -> None:
    book, c1, c2, c3, c4 = transitive()
    assert owed(book.view(c2)) == [(c1, c4, "revise")]
    assert (book.view(c3).support, owed(book.view(c3))) == ("flagged", [(c2, c2, "flagged")])


def test_reviewing_the_frontier_clears_what_stands_on_it() -> None:
    book, _, c2, c3, _ = transitive()
    book.review(c2)
    assert (book.view(c2).support, book.view(c3).support) == ("clean", "clean")


def test_a_review_refuses_a_record_whose_flags_are_all_inherited() -> None:
    book, _, c2, c3, _ = transitive()
    with pytest.raises(Invalid, match=f"its flags come from {c2}"):
        book.review(c3)
    assert book.view(c3).support == "flagged"


def test_an_inherited_flag_is_never_pinned() -> None:
    """A mark another tool wrote for an inherited flag does not clear it."""
    book, _, c2, c3, _ = transitive()
    as_of = book.view(c3).review_owed[0].as_of
    book.raw("entity.reviewed", Reviewed(c3, (ReviewMark(c2, c2, "flagged", as_of),), None))
    assert owed(book.view(c3)) == [(c2, c2, "flagged")]


def test_a_review_pins_its_own_flag_and_the_inherited_one_stays() -> None:
    """d4 stands on d3, revised to d5, which is blocked: the review takes the revision, the
    block stays owed until it clears."""
    book = Book()
    c = book.claim("the vendor answers within a day", state="unassessed")
    d3 = book.decision("integrate the vendor API")
    d4 = book.claim("the integration lands this quarter", supports=d3)
    d5 = book.decision("integrate the vendor API v2", supersedes=d3, supersede_reason="revise", depends_on=c)
    assert owed(book.view(d4)) == [(d3, d5, "revise")]
    book.review(d4)
    assert owed(book.view(d4)) == [(d3, d5, "blocked")]
    book.assess(c, "accepted")
    assert book.view(d4).support == "clean"


# --- prerequisites -----------------------------------------------------------------------------


def test_a_revised_prerequisite_owes_a_review() -> None:
    book = Book()
    c1 = book.claim("the license allows it")
    d = book.decision("vendor the library", depends_on=c1)
    c2 = book.claim("the license allows it with attribution", supersedes=c1, supersede_reason="revise")
    view = book.view(d)
    assert (view.blocked, view.support, owed(view)) == (False, "flagged", [(c1, c2, "revise")])
    book.review(d)
    assert (book.view(d).support, book.view(d).review_owed) == ("clean", ())


def test_a_restated_prerequisite_owes_nothing_and_a_reversed_one_blocks() -> None:
    book = Book()
    c1 = book.claim("the license allows it")
    d = book.decision("vendor the library", depends_on=c1)
    c2 = book.claim("the license permits it", supersedes=c1, supersede_reason="restate")
    assert (book.view(d).blocked, book.view(d).support) == (False, "clean")
    c3 = book.claim("the license forbids it", supersedes=c2, supersede_reason="reverse")
    assert (book.view(d).blocked, book.view(d).blocked_by) == (True, (c1, c3))


def test_blocked_by_names_the_cited_id_and_the_head_it_resolved_to() -> None:
    book = Book()
    c1 = book.claim("the license allows it")
    d = book.decision("vendor the library", depends_on=c1)
    c2 = book.claim("the license allows it with attribution", supersedes=c1, supersede_reason="restate")
    book.assess(c2, "disputed")
    assert book.view(d).blocked_by == (c1, c2)


def test_blocked_by_names_what_blocks_a_blocked_prerequisite() -> None:
    book = Book()
    c = book.claim("the budget is approved", state="disputed")
    d1 = book.decision("hire a contractor", depends_on=c)
    d2 = book.decision("onboard the contractor", depends_on=d1)
    assert book.view(d2).blocked_by == (d1, c)


def test_a_prerequisite_that_resolves_back_onto_its_dependent_blocks() -> None:
    book = Book()
    d1 = book.decision("ship the server")
    d2 = book.decision("ship the client", depends_on=d1)
    d3 = book.decision("ship the server", supersedes=d1, supersede_reason="restate", depends_on=d2)
    assert (book.view(d2).blocked, book.view(d3).blocked) == (True, True)
    # explained in id order, as Docket reads its file: d2's walk crosses to d3 and comes
    # back, so d3 is named alone; d3 then reads what d2 was found to wait on
    assert book.view(d2).blocked_by == (d1, d3)
    assert book.view(d3).blocked_by == (d2, d1, d3)
    assert (book.view(d2).support, book.view(d3).support) == ("clean", "clean")


def test_a_chain_reversed_then_revised_names_its_current_head() -> None:
    book = Book()
    c1 = book.claim("the license allows it")
    d = book.decision("vendor the library", depends_on=c1)
    c2 = book.claim("the dependent claim", supports=c1)
    c3 = book.claim("the license forbids it", supersedes=c1, supersede_reason="reverse")
    c4 = book.claim("the license forbids it outright", supersedes=c3, supersede_reason="revise")
    assert book.view(d).blocked_by == (c1, c4)
    assert [(x.ground, x.reason, x.head) for x in book.view(c2).lost] == [(c1, "reverse", c4)]


# --- cycles ------------------------------------------------------------------------------------


def test_an_ungrounded_cycle_is_flagged_circular() -> None:
    """c2 stands on c1; c3 restates c1 and stands on c2: nothing grounds the two, nothing
    withdrew them either."""
    book = Book()
    c1 = book.claim("the protocol is stable")
    c2 = book.claim("clients need no upgrade", supports=c1)
    c3 = book.claim("the protocol stays stable", supersedes=c1, supersede_reason="restate", supports=c2)
    assert (book.view(c2).support, book.view(c3).support) == ("flagged", "flagged")
    assert (c1, c3, "circular") in owed(book.view(c2))
    assert book.view(c2).lost == ()


def test_a_real_loss_inside_a_cycle_stays_unsupported() -> None:
    book = Book()
    c1 = book.claim("the protocol is stable")
    c2 = book.claim("clients need no upgrade", supports=c1)
    book.claim("the protocol changes", supersedes=c1, supersede_reason="reverse", supports=c2)
    view = book.view(c2)
    assert view.support == "unsupported"
    assert [(x.ground, x.reason) for x in view.lost] == [(c1, "reverse")]


def test_a_cycle_other_tools_linked_is_circular_and_a_review_clears_it() -> None:
    book = Book()
    a = book.claim("a holds")
    b = book.claim("b holds", supports=a)
    book.raw("entity.linked", Linked(a, Link("supports", b, 0)))
    assert (book.view(a).support, book.view(b).support) == ("flagged", "flagged")
    assert owed(book.view(a)) == [(b, b, "circular")]
    book.review(a)
    assert (book.view(a).support, book.view(b).support) == ("clean", "clean")


# --- unsupported records still count ---------------------------------------------------------


def test_an_unsupported_accepted_claim_resolves_and_serves_as_a_prerequisite() -> None:
    book = Book()
    shaky = book.claim("the vendor promised an SLA", state="rejected")
    q = book.question("can we rely on the vendor?")
    c = book.claim("the vendor is reliable", supports=shaky, answers=q)
    d = book.decision("drop the fallback", depends_on=c)
    assert book.view(c).support == "unsupported"
    assert (book.view(q).resolved_by, book.view(d).blocked) == ((c,), False)


def test_an_unsupported_decision_resolves_and_unblocks() -> None:
    book = Book()
    shaky = book.claim("the team knows sqlite", state="rejected")
    q = book.question("which database?")
    d = book.decision("use sqlite", supports=shaky, answers=q)
    on_d = book.decision("use sqlite fts", depends_on=d)
    assert book.view(d).support == "unsupported"
    assert (book.view(q).resolved_by, book.view(on_d).blocked) == ((d,), False)


# --- what review_owed and lost list ------------------------------------------------------------


def test_review_owed_lists_every_flagged_set() -> None:
    book = Book()
    x = book.claim("users asked for it", state="unassessed")
    y = book.claim("the contract may require it", state="disputed")
    z = book.claim("we build it", supports=(x, y))
    assert owed(book.view(z)) == [(x, x, "unassessed"), (y, y, "disputed")]


def test_reason_words_are_the_supersession_reasons() -> None:
    book = Book()
    c1 = book.claim("the API returns JSON")
    c2 = book.claim("clients parse it", supports=c1)
    c3 = book.claim("the API returns JSON with a schema", supersedes=c1)
    assert owed(book.view(c2)) == [(c1, c3, "revise")]
    book.claim("the API returns XML", supersedes=c3, supersede_reason="reverse")
    assert [(x.ground, x.reason) for x in book.view(c2).lost] == [(c1, "reverse")]


def test_a_review_written_with_the_old_reason_word_still_counts() -> None:
    """Stores written before the reason words changed keep their acknowledgements."""
    book = Book()
    c1 = book.claim("the API returns JSON")
    c2 = book.claim("clients parse it", supports=c1)
    c3 = book.claim("the API returns JSON with a schema", supersedes=c1)
    as_of = book.view(c2).review_owed[0].as_of
    book.raw("entity.reviewed", Reviewed(c2, (ReviewMark(c1, c3, "revised", as_of),), None))
    assert book.view(c2).support == "clean"


def test_a_retracted_ground_is_still_lost() -> None:
    """Retraction is selfhub's own (Docket has none): nothing stands in its place."""
    book = Book()
    c1 = book.claim("the API returns JSON")
    c2 = book.claim("clients parse it", supports=c1)
    book.raw("entity.retracted", EntityWhy(c1, "wrong"))
    assert [(x.ground, x.reason) for x in book.view(c2).lost] == [(c1, "retracted")]


# --- question pruning ----------------------------------------------------------------------------


def test_a_moot_question_leaves_context_and_status_lists_it() -> None:
    book = Book()
    same = ("json=parse with the stdlib", "cbor=parse with the stdlib")
    moot = book.question("json or cbor?", options=same)
    book.question("sqlite or postgres?", options=("sqlite=embed it", "postgres=run a server"))
    state = book.state()
    text = render_agent(build_context("app", state, [], WorkspaceConfig(), "2026-11-30", {}, 0))
    assert "json or cbor?" not in text
    assert "sqlite or postgres? (unresolved)" in text
    assert "1 moot question" in text and "self status --project app" in text
    doc = build_status("app", state, {}, [], "2026-11-30")
    assert [line.record for line in doc.moot] == [moot]
    assert "moot questions: 1" in render_status(doc)
    assert "json or cbor?" in render_status(doc)


def test_only_a_current_decision_is_blocked() -> None:
    """Docket's `applicable` is false for a retired decision, naming itself in `blocked_by`;
    `blocked` stays the mark of current adopted decisions, so nothing shows it blocked."""
    book = Book()
    c = book.claim("the license allows it", state="unassessed")
    d1 = book.decision("vendor the library", depends_on=c)
    d2 = book.decision("vendor the library, pinned", supersedes=d1, supersede_reason="restate")
    old = book.view(d1)
    assert (old.current, old.blocked, old.applicable, old.blocked_by) == (False, False, False, (d1,))
    assert (book.view(d2).blocked, book.view(d2).applicable) == (False, True)


def test_a_revoked_decision_is_not_applicable_and_names_itself() -> None:
    book = Book()
    d = book.decision("vendor the library")
    book.revoke(d)
    view = book.view(d)
    assert (view.current, view.blocked, view.applicable, view.blocked_by) == (True, False, False, (d,))
    assert build_status("p", book.state(), {}, [], "2026-11-30").blocked == []
    assert ledger_words(ledger_extras(book.state())[d]) == ["revoked"]


def test_a_blocked_decision_is_not_applicable() -> None:
    book = Book()
    c = book.claim("the license allows it", state="unassessed")
    d = book.decision("vendor the library", depends_on=c)
    assert (book.view(d).blocked, book.view(d).applicable, book.view(d).blocked_by) == (True, False, (c,))
    assert book.view(c).applicable is None


def test_flags_show_only_on_current_accepted_or_adopted_records() -> None:
    """Docket shows support to a reader only on a current accepted claim or adopted
    decision; a record in another state already says it is not to be relied on."""
    book = Book()
    c1 = book.claim("the API returns JSON")
    shown = book.claim("clients parse it", supports=c1)
    hidden = book.claim("clients cache it", state="unassessed", supports=c1)
    book.claim("the API returns JSON with a schema", supersedes=c1)
    assert (book.view(shown).support, book.view(hidden).support) == ("flagged", "flagged")
    state = book.state()
    doc = build_status("app", state, {}, [], "2026-11-30")
    assert [line.record for line in doc.review_owed] == [shown]
    text = render_agent(build_context("app", state, [], WorkspaceConfig(), "2026-11-30", {}, 0))
    assert "1 ledger record owes a review" in text
    assert "clients cache it (unassessed)" in text
