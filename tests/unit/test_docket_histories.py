"""Random ledger histories: Docket reads the export as selfhub reads its rows, after every step.

A history starts from a random Docket ledger (`tests/support/docket_ledgers.py`) imported into
a project, then runs random ledger commands on it — assessments, revocations, reviews, new
records citing or superseding earlier ones — and after each one holds Docket's reading of
the export (`tests/support/docket_views.py`, its rules stated from its source) to selfhub's
own derived views, record by record; at the end, the export imported elsewhere and exported
again gives the same bytes.

The rows are compared whole, the reason each owed ground gives included, and a history may
supersede any current claim or decision, a prerequisite of a decision among them.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from service.core.commands.config import WorkspaceConfig
from service.core.errors import Invalid
from service.core.interop import docket_out, exchange
from service.core.ledger import docket
from service.core.ledger.derived import derive
from tests.support import docket_views
from tests.support.docket_ledgers import docket_ledgers, renumbered
from tests.unit.test_docket_round_trip import compact
from tests.unit.test_ledger import Book

STEPS = ("assess", "revoke", "review", "claim", "decision", "supersede")
CLAIM_STATES = ("unassessed", "accepted", "disputed", "rejected")
REASONS = ("restate", "revise", "reverse")


def imported(ledger: list[dict[str, Any]]) -> Book:
    book = Book()
    read = docket.read(list(enumerate(compact(ledger), 1)))
    events, _ = exchange.import_docket(book.state(), WorkspaceConfig(), book.clock(), read)
    book.events += events
    return book


def imported_texts(texts: list[str]) -> Book:
    book = Book()
    read = docket.read(list(enumerate(texts, 1)))
    events, _ = exchange.import_docket(book.state(), WorkspaceConfig(), book.clock(), read)
    book.events += events
    return book


def prerequisites(book: Book) -> set[str]:
    """Every record a decision depends on."""
    return {t for fact in book.state().ledger.values() for t in fact.depends_on}


def step(book: Book, draw: st.DrawFn) -> str:
    """One random ledger command on the book's current records (a refused one is skipped)."""
    state = book.state()
    current = sorted(i for i, fact in state.ledger.items() if fact.current)
    of_kind = {kind: [i for i in current if state.ledger[i].kind == kind] for kind in ("claim", "decision")}
    grounds = of_kind["claim"] + of_kind["decision"]
    what = draw(st.sampled_from(STEPS))
    try:
        if what == "assess" and of_kind["claim"]:
            book.assess(draw(st.sampled_from(of_kind["claim"])), draw(st.sampled_from(CLAIM_STATES)))
        elif what == "revoke" and of_kind["decision"]:
            book.revoke(draw(st.sampled_from(of_kind["decision"])))
        elif what == "review" and (owing := [i for i, view in derive(state).items() if view.review_owed]):
            book.review(draw(st.sampled_from(owing)))
        elif what in ("claim", "decision"):
            cited = draw(st.lists(st.sampled_from(grounds), max_size=2, unique=True)) if grounds else []
            given: dict[str, Any] = {"supports": (",".join(cited),)} if cited else {}
            if what == "decision" and grounds and draw(st.booleans()):
                given["depends_on"] = (draw(st.sampled_from(grounds)),)
            book.record(what, f"a {what} made here, step {len(book.events)}", **given)
        elif what == "supersede" and grounds:
            needed = [g for g in grounds if g in prerequisites(book)]  # a prerequisite half the time
            old = draw(st.sampled_from(needed if needed and draw(st.booleans()) else grounds))
            kind = state.ledger[old].kind
            reason = draw(st.sampled_from(REASONS))
            book.record(kind, f"{kind} {old[-4:]} again", supersedes=old, supersede_reason=reason)
            what += " a prerequisite" if old in prerequisites(book) else ""
    except Invalid:
        return f"{what} (refused)"
    return what


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docket_ledgers(), st.booleans(), st.data())
def test_docket_reads_every_step_of_a_random_history_as_here(
    ledger: list[dict[str, Any]], shared: bool, data: st.DataObject
) -> None:
    book = imported(renumbered(ledger, shared=shared))
    found = docket_views.disagreements(book.state())
    assert found == [], f"after the import: {found}"
    done: list[str] = []
    for _ in range(data.draw(st.integers(1, 6))):
        done.append(step(book, data.draw))
        event(done[-1])
        found = docket_views.disagreements(book.state())
        assert found == [], f"after {done}: {found}"
    once = docket_out.docket_export(book.state()).texts
    again = imported_texts(once)
    assert docket_out.docket_export(again.state()).texts == once, "a second round trip differs"
