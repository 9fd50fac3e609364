"""`export docket` writes what `import docket` reads back the same, in a file Docket's own
reader accepts: random Docket ledgers imported, exported and imported again give the same rows.

The ledgers come in both numberings Docket writes: ids in one sequence shared by the three
kinds (`c1`, `d2`, `q3`: its earlier versions) and each kind on its own (`c1`, `c2`, `d1`: as
it numbers now). The export numbers in one shared sequence, the one numbering every stored
version of Docket's reader accepts (`tests/support/docket_reader.py` holds the file to those readers).
A ledger numbered that way comes back with its own ids, and its rows compare as they are. A
ledger numbered per kind is renumbered by the export, so its rows compare modulo that
renaming: the export writes the records in the ledger's order, so the n-th record line of
the ledger is the n-th of the export, and every id in a row of the first import is replaced
by the id the export gave that record before the rows are compared.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.core.fold.state import State
from service.core.interop import docket_out
from service.core.projections import views
from tests.support import docket_reader
from tests.support.docket_ledgers import RECORD_KINDS, docket_ledgers, renumbered
from tests.unit.test_ledger_docket import Log


def rows(state: State) -> dict[str, dict[str, Any]]:
    """Each ledger record's row and placement, by alias, every id in it named by its alias
    (`source` and the event ids a review mark dates from differ from store to store)."""
    alias = {e.id: e.ledger.alias for e in state.entities.values() if e.ledger is not None and e.ledger.alias}

    def named(value: Any) -> Any:
        if isinstance(value, str):
            return alias.get(value, value)
        if isinstance(value, list):
            return [named(v) for v in value]
        if isinstance(value, dict):
            return {k: named(v) for k, v in value.items() if k not in ("source", "as_of")}
        return value

    found: dict[str, dict[str, Any]] = {}
    for record_id, extra in views.ledger_extras(state).items():
        e = state.entities[record_id]
        owed = sorted({(o["ground"], o["head"]) for o in extra["review_owed"]})  # Docket pins grounds
        row = extra | {
            "review_owed": [{"ground": ground, "head": head} for ground, head in owed],
            "text": e.text,
            "why": e.why,
            "status": e.status,
            "exposure": e.exposure,
            "priority": e.priority,
        }
        found[alias[record_id]] = named(row)
    return found


def imported(lines: list[dict[str, Any]] | list[str]) -> Log:
    """A log holding the ledger of `lines` (each a line's JSON, or its text as written)."""
    log = Log()
    log.load(list(enumerate(lines, 1)))
    return log


def compact(lines: list[dict[str, Any]]) -> list[str]:
    """Lines as Docket's append writes them."""
    return [json.dumps(line, ensure_ascii=False, separators=(",", ":")) for line in lines]


def renaming(ledger: list[dict[str, Any]], exported: list[dict[str, Any]]) -> dict[str, str]:
    """Each record's id in `ledger` → its id in `exported`, by the order of their record lines."""
    before = [(line["kind"], line["id"]) for line in ledger if line["kind"] in RECORD_KINDS]
    after = [(line["kind"], line["id"]) for line in exported if line["kind"] in RECORD_KINDS]
    assert [kind for kind, _ in before] == [kind for kind, _ in after]
    return {old: new for (_, old), (_, new) in zip(before, after, strict=True)}


def renamed(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [renamed(v, names) for v in value]
    if isinstance(value, dict):
        return {renamed(k, names): renamed(v, names) for k, v in value.items()}
    return value


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docket_ledgers(), st.booleans())
def test_import_export_import_gives_the_same_rows(ledger: list[dict[str, Any]], shared: bool) -> None:
    ledger = renumbered(ledger, shared=shared)
    first = imported(compact(ledger))
    written = docket_out.docket_export(first.state())
    exported = written.lines
    for version in (docket_reader.V049E5AA, docket_reader.PER_KIND):
        docket_reader.check(exported, version)  # Docket's readers accept the file
    records = zip(
        (line for line in ledger if line["kind"] in RECORD_KINDS),
        (line for line in exported if line["kind"] in RECORD_KINDS),
        strict=True,
    )  # the default reason: written where the ledger wrote it, and never else
    assert all(
        (new.get("supersede_reason") == "revise") <= (old.get("supersede_reason") == "revise")
        for old, new in records
    )
    if shared and all(line["kind"] in RECORD_KINDS and "supersede_reason" not in line for line in exported):
        docket_reader.check(exported, docket_reader.V168D1F2)  # records only, every reason revise
    names = renaming(ledger, exported)
    if shared:
        assert all(old == new for old, new in names.items())  # its own ids, kept
    second = imported(written.texts)
    assert rows(second.state()) == renamed(rows(first.state()), names)
    assert docket_out.docket_export(second.state()).texts == written.texts  # byte for byte


def test_an_exported_record_keeps_its_docket_id_and_fields() -> None:
    """An imported record comes back as its ledger wrote it: its line, then its corrections
    (the reasons and provenance with them) and its review (the note with it), in their places."""
    from tests.unit.test_ledger_docket import rows_of

    log = Log()
    log.load(rows_of("first.jsonl"))
    lines = docket_out.docket_lines(log.state())
    exported = {line["id"]: line for line in lines}
    d4 = exported["d4"]
    assert d4["text"] == "Parse API responses with the standard library."  # as first written
    assert (d4["ts"], d4["author"], d4["session"], d4["branch"]) == (
        "2026-09-02T09:10:00+00:00",
        "ada",
        "s-01",
        "main",
    )
    assert exported["d4.1"]["fields"]["text"] == "Parse API responses with the standard library json module."
    assert exported["d4.1"]["reason"] == "name the module"
    assert exported["d4.2"]["fields"] == {
        "decided_by": "ada and grace",
        "revisit": "when orjson ships wheels everywhere",
    }
    assert (exported["c6"]["supersedes"], exported["c6"]["supersede_reason"]) == (
        ["c2"],
        "revise",
    )  # as written
    assert exported["d9"]["state"] == "revoked" and exported["d9"]["pinned"] is True
    assert exported["d4.r1"]["grounds"] == {"c2": "c6"}
    assert exported["d4.r1"]["note"] == "Still stands: the header only narrowed to JSON bodies."
    assert [line["id"] for line in lines] == [line["id"] for _, line in rows_of("first.jsonl")]


def test_records_written_here_export_as_lines_docket_reads() -> None:
    from tests.unit.test_ledger import Book

    book = Book()
    q1 = book.question("which parser?")
    book.question("which parser for the CLI?", answers=q1)  # a question answering one: Docket has none
    c = book.claim("the API returns JSON", evidence=("docs/api.md", ""))
    book.decision("parse with the stdlib", supports=c, answers=q1, revisit="2027-01-31")
    book.assess(c, "disputed")
    exported = docket_out.docket_lines(book.state())
    by_id = {line["id"]: line for line in docket_reader.check(exported, docket_reader.V049E5AA)}
    assert list(by_id) == ["q1", "q2", "c3", "d4"]  # one sequence across the kinds
    assert by_id["q2"]["answers"] == []
    assert by_id["c3"]["evidence"] == [{"ref": "docs/api.md"}]
    assert by_id["c3"]["state"] == "disputed"
    assert by_id["d4"]["choice"] == "parse with the stdlib"  # none recorded: Docket's reader wants one
    assert (by_id["d4"]["supports"], by_id["d4"]["answers"], by_id["d4"]["revisit"]) == (
        [["c3"]],
        ["q1"],
        "2027-01-31",
    )


def test_a_record_written_here_carries_its_author_and_session() -> None:
    """The signed author (`origin.by`) and the session of the event that made a record are
    its line's `author` and `session`; a record its writer did not sign has none."""
    from service.core.commands.commands import AddRequest, Clock
    from service.core.commands.config import WorkspaceConfig
    from service.core.events.events import Origin
    from service.core.ledger import ledger
    from tests.unit.test_ledger import NOW, Book

    book = Book()
    signed = Clock(book.new_id, NOW, Origin("human", True, "s-42", "ada"), "app")
    request = AddRequest(text="the API returns JSON", labels=("claim",), exposure="index")
    book.events += ledger.add(book.state(), WorkspaceConfig(), signed, request, ledger.LedgerInput())
    book.claim("the API is versioned")
    written = docket_out.docket_export(book.state(), docket_out.written_by(book.events))
    first, second = written.lines
    assert (first["author"], first["session"], first["branch"]) == ("ada", "s-42", "")
    assert (second["author"], second["session"]) == ("", "")
    assert written.texts[0].startswith('{"schema":2,"kind":"claim","id":"c1","text":"the API returns JSON"')


def test_a_review_made_here_carries_its_note_author_and_session() -> None:
    from service.core.commands.commands import Clock
    from service.core.events.events import Origin
    from service.core.ledger import ledger
    from tests.unit.test_ledger import NOW, Book

    book = Book()
    c1 = book.claim("the API returns JSON")
    c2 = book.claim("clients can parse every response", supports=c1)
    book.claim("the API returns JSON with a schema", supersedes=c1, supersede_reason="revise")
    signed = Clock(book.new_id, NOW, Origin("human", True, "s-7", "grace"), "app")
    book.events += ledger.review(book.state(), signed, c2, "the schema changes nothing for parsing")
    written = docket_out.docket_export(book.state(), docket_out.written_by(book.events))
    review = written.lines[-1]
    assert (review["id"], review["grounds"], review["note"]) == (
        "c2.r1",
        {"c1": "c3"},
        "the schema changes nothing for parsing",
    )
    assert (review["author"], review["session"]) == ("grace", "s-7")
    assert review["ts"] >= written.lines[-2]["ts"]  # when the review was made
