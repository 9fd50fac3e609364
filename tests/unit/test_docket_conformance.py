"""What Docket derives from our export is what selfhub derives.

Docket's derived-view rules are stated again from its source (`tests/support/docket_views.py`)
and held first to what Docket itself printed for its own repository ledger
(`tests/fixtures/conformance/docket-real/`: the ledger and `expected.json`, its `list --json
--superseded`). Then that ledger comes back from an import and an export byte for byte (its
provenance, corrections with their reasons, reviews with their notes), and every record's
views as Docket reads our export equal selfhub's own rows: for that ledger, for the review a
later assessment makes owed again, after every ledger command of every scenario in
`tests/unit/test_ledger.py`, and over random histories (`test_docket_histories.py`).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from service.core.events.events import Link, Linked
from service.core.fold.state import State
from service.core.interop import docket_out
from tests.support import docket_reader, docket_views
from tests.unit import test_ledger
from tests.unit.test_ledger import Book
from tests.unit.test_ledger_docket import Log

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "conformance" / "docket-real"


def real_text() -> str:
    return (REAL / "ledger.jsonl").read_text("utf-8")


def imported(text: str) -> Log:
    """A log holding the ledger of `text`, each line given as written."""
    log = Log()
    log.load([(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()])
    return log


def exported(state: State) -> str:
    return "".join(text + "\n" for text in docket_out.docket_export(state).texts)


def test_the_rules_reproduce_what_docket_printed_for_its_own_ledger() -> None:
    expected = json.loads((REAL / "expected.json").read_text("utf-8"))
    assert docket_views.views(real_text()) == expected
    assert len(expected) == 154


def test_docket_s_own_ledger_comes_back_byte_for_byte() -> None:
    text = real_text()
    log = imported(text)
    once = exported(log.state())
    assert once == text  # provenance, legacy, corrections and reviews as Docket wrote them
    assert exported(imported(once).state()) == once
    lines = [json.loads(line) for line in once.splitlines()]
    assert [line["kind"] for line in lines].count("correction") == 3
    assert [line["kind"] for line in lines].count("review") == 8
    reasons = {line["id"]: line["reason"] for line in lines if line["kind"] == "correction"}
    assert reasons["d93.1"] == "d93 repeats d91 word for word"
    for version in (docket_reader.V049E5AA, docket_reader.PER_KIND):
        docket_reader.read(once, version)


def test_the_import_keeps_each_line_with_its_record() -> None:
    log = imported(real_text())
    state = log.state()
    trail = state.entities[log.record("d93")].ledger
    assert trail is not None and trail.docket is not None
    assert trail.docket.record.line["author"] == "claude-code"
    assert [c.line["reason"] for c in trail.docket.corrections] == ["d93 repeats d91 word for word"]
    assert trail.docket.corrections[0].line["session"] == "session_01J5NASWigTwjx7R5YdUES1p"
    d35 = state.entities[log.record("d35")].ledger
    assert d35 is not None and d35.docket is not None
    assert [r.line["note"][:30] for r in d35.docket.reviews] == ["The Windows PATH edit belongs "]
    migrated = [
        e.ledger.docket.record.line["legacy"]["source_id"]
        for e in state.entities.values()
        if e.ledger is not None and e.ledger.docket is not None and "legacy" in e.ledger.docket.record.line
    ]
    assert len(migrated) == 44


def test_docket_reads_our_export_of_its_ledger_as_we_do() -> None:
    state = imported(real_text()).state()
    written = docket_out.docket_export(state)
    assert len(docket_views.ours(state, written.names)) == 154
    assert docket_views.disagreements(state) == []


def test_a_review_made_stale_here_is_owed_in_docket_too() -> None:
    """c2 rests on c1, d3 on c2; c4 revises c1 and c2's review takes the revision; then c4 is
    disputed. selfhub owes c2's review again (d3 inherits the flag), and so does Docket."""
    book = Book()
    c1 = book.claim("the API returns JSON")
    c2 = book.claim("clients can parse every response", supports=c1)
    d3 = book.decision("parse with the standard library", supports=c2)
    c4 = book.claim("the API returns JSON with a schema", supersedes=c1, supersede_reason="revise")
    book.review(c2)
    assert docket_views.disagreements(book.state()) == []
    assert '"grounds":{"c1":"c4"}' in exported(book.state())
    book.assess(c4, "disputed")
    assert (book.view(c2).support, book.view(d3).support) == ("flagged", "flagged")
    read = docket_views.theirs(exported(book.state()))
    assert (read["c2"]["support"], read["d3"]["support"]) == ("flagged", "flagged")
    assert docket_views.disagreements(book.state()) == []
    book.review(c2)  # taken again: written as a second review line, and clean in both
    assert docket_views.disagreements(book.state()) == []
    assert docket_views.theirs(exported(book.state()))["c2"]["support"] == "clean"


def test_a_reviewed_ground_still_flagged_by_what_it_inherits_reads_alike() -> None:
    """c3 rests on c2, which is unassessed and itself flagged (it rests on a disputed c1). A
    review of c3 lifts c2's own cause, and c2's flag still flags the ground, in selfhub and in
    Docket (the review line is written; Docket's pin lifts the own causes alone)."""
    book = Book()
    c1 = book.claim("the API returns JSON", state="disputed")
    c2 = book.claim("clients can parse every response", state="unassessed", supports=c1)
    c3 = book.claim("the parser needs no schema", supports=c2)
    assert [o.reason for o in book.view(c3).review_owed] == ["unassessed"]
    book.review(c3)
    assert [(o.ground, o.reason) for o in book.view(c3).review_owed] == [(c2, "flagged")]
    assert '"reviews":"c3","grounds":{"c2":"c2"}' in exported(book.state())
    read = docket_views.theirs(exported(book.state()))["c3"]
    assert (read["support"], read["review_owed"]) == (
        "flagged",
        [{"ground": "c2", "head": "c2", "because": "flagged"}],
    )
    assert docket_views.disagreements(book.state()) == []
    book.review(c2)  # c2's own flag taken: c3's ground is clean in both
    assert (book.view(c3).support, docket_views.theirs(exported(book.state()))["c3"]["support"]) == (
        "clean",
        "clean",
    )
    assert docket_views.disagreements(book.state()) == []


def test_a_decision_whose_prerequisite_was_superseded_reads_alike() -> None:
    """Docket follows a prerequisite to the head of its chain: a restated one still holds, a
    disputed head blocks (naming the cited record and the head), a reversal blocks."""
    book = Book()
    c1 = book.claim("the license allows it")
    d2 = book.decision("vendor the library", depends_on=c1)
    c3 = book.claim("the license allows it, restated", supersedes=c1, supersede_reason="restate")
    read = docket_views.theirs(exported(book.state()))["d2"]
    assert (book.view(d2).blocked, read["applicable"], read["blocked_by"]) == (False, True, [])
    book.assess(c3, "disputed")
    read = docket_views.theirs(exported(book.state()))["d2"]
    assert (book.view(d2).blocked_by, read["blocked_by"]) == ((c1, c3), ["c1", "c3"])
    book.assess(c3, "accepted")
    book.claim("the license forbids it", supersedes=c3, supersede_reason="reverse")
    read = docket_views.theirs(exported(book.state()))["d2"]
    assert (read["applicable"], read["blocked_by"]) == (False, ["c1", "c4"])
    assert docket_views.disagreements(book.state()) == []


class Watched(Book):
    """A Book whose every state after a ledger command is checked against Docket's reading."""

    seen: list[str]

    def __init__(self) -> None:
        super().__init__()
        self.seen = []

    def _check(self, what: str) -> None:
        found = docket_views.disagreements(self.state())
        assert found == [], f"after {what}: {found}"
        self.seen.append(what)

    def record(self, kind: str, text: str, **given: Any) -> str:
        made = super().record(kind, text, **given)
        self._check(f"{kind} {text!r}")
        return made

    def assess(self, record: str, state: str) -> None:
        super().assess(record, state)
        self._check(f"assess {state}")

    def revoke(self, record: str) -> None:
        super().revoke(record)
        self._check("revoke")

    def review(self, record: str) -> None:
        super().review(record)
        self._check("review")

    def raw(self, kind: str, payload: Any) -> str:
        made = super().raw(kind, payload)
        self._check(kind)
        return made


# What a Docket file cannot say, so Docket reads these otherwise (docs/importing.md lists them):
BEYOND_DOCKET = {
    "test_a_retracted_ground_is_lost": "Docket has no retraction: the record is left out",
    "test_a_proposal_is_current_until_withdrawn": "Docket has no retraction: the record is left out",
    "test_a_ground_outside_this_log_is_lost": "a record outside the project's ledger is not in its file",
    "test_a_cycle_with_an_outside_ground_is_supported": "a relation to a later record: Docket's point back",
    "test_a_supersession_cycle_ends_the_chain": "a relation to a later record: Docket's point back",
    "test_decisions_waiting_on_each_other_stay_blocked": "a relation to a later record: Docket's point back",
}


def scenarios() -> list[tuple[str, Callable[..., None]]]:
    """The ledger scenarios of `test_ledger.py` that take no argument or the `grounded` book,
    but those whose history a Docket file cannot hold (`BEYOND_DOCKET`)."""
    found = []
    for name, test in sorted(vars(test_ledger).items()):
        if name.startswith("test_") and callable(test) and name not in BEYOND_DOCKET:
            parameters = set(inspect.signature(test).parameters)
            if parameters <= {"grounded"}:
                found.append((name, test))
    return found


def test_a_history_docket_cannot_hold_still_exports_a_file_it_reads() -> None:
    """A relation to a later record is left out, and the file reads in Docket's reader."""
    book = Book()
    c1 = book.claim("the API returns JSON")
    c2 = book.claim("clients can parse every response")
    book.raw("entity.linked", Linked(c1, Link("supports", c2, 0)))
    text = exported(book.state())
    docket_reader.read(text, docket_reader.V049E5AA)
    assert json.loads(text.splitlines()[0])["supports"] == []


@pytest.mark.parametrize(("name", "scenario"), scenarios(), ids=[name for name, _ in scenarios()])
def test_every_ledger_scenario_reads_in_docket_as_here(
    name: str, scenario: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    books: list[Watched] = []

    def book() -> Watched:
        made = Watched()
        books.append(made)
        return made

    monkeypatch.setattr(test_ledger, "Book", book)
    if "grounded" in inspect.signature(scenario).parameters:
        grounded = book()
        c1 = grounded.claim("the API returns JSON")
        c2 = grounded.claim("clients can parse every response", supports=c1)
        scenario(grounded=(grounded, c1, c2))
    else:
        scenario()
