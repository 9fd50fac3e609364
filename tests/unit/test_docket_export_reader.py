"""`self export docket` writes a ledger Docket's own reader accepts, whatever it holds.

Docket's reader is rebuilt from its source as a checker (`tests/support/docket_reader.py`, one
`Version` per stored `ledger.py`), first held to Docket's fixtures here: a ledger numbered in
one sequence shared by the kinds reads in every version that knows its lines, one numbered
per kind only in the version that numbers that way. Then an export holding every kind of
record and line — two imported ledgers (one shared-sequence, one per kind) and records
written here — reads in both versions that know reviews, while the same lines numbered per
kind (what the export wrote before) are refused by every shared-sequence version.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from service.core.commands.config import WorkspaceConfig
from service.core.interop import docket_out, exchange
from service.core.ledger import docket, ledger
from tests.support import docket_reader
from tests.support.docket_ledgers import RECORD_KINDS, renumbered
from tests.unit.test_ledger import Book
from tests.unit.test_ledger_docket import Log, rows_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "docket"
SHARED_VERSIONS = [v for v in docket_reader.VERSIONS if v.shared]


def text_of(name: str) -> str:
    return (FIXTURES / name).read_text("utf-8")


def test_the_checker_reads_docket_s_fixtures_as_each_version_would() -> None:
    first, second = text_of("first.jsonl"), text_of("second.jsonl")  # shared; per kind
    for version in (docket_reader.V049E5AA, docket_reader.PER_KIND):
        assert len(docket_reader.read(first, version)) == 15
    with pytest.raises(docket_reader.Refused, match="supersede_reason"):  # before it knew reasons
        docket_reader.read(first, docket_reader.V168D1F2)
    for version in SHARED_VERSIONS:
        with pytest.raises(docket_reader.Refused, match=r"line 3: d1: ids must rise \(one sequence"):
            docket_reader.read(second, version)
    kept = docket_reader.read(second, docket_reader.PER_KIND)
    assert [line["id"] for line in kept] == ["c1", "c2", "d1", "q1"]  # the newer kind skipped


def test_the_checker_refuses_what_docket_s_reader_refuses() -> None:
    lines = [line for _, line in rows_of("first.jsonl")]
    for at, change, why in (
        (1, {"id": "c0"}, "number 0"),
        (1, {"evidence": ["docs/api.md"]}, "evidence item"),  # a bare string: an earlier shape
        (3, {"depends_on": ["q3"]}, "depends_on q3 is a question"),
        (3, {"choice": " "}, "choice"),
        (2, {"state": "resolved"}, "recorded open"),
        (3, {"supports": [["c7"]]}, "supports c7 is unknown or later"),
    ):
        edited = [line | change if n == at else line for n, line in enumerate(lines)]
        with pytest.raises(docket_reader.Refused, match=why):
            docket_reader.check(edited, docket_reader.V049E5AA)


def every_kind() -> Book:
    """Docket's two fixture ledgers imported into one project, then records written here
    that cite, supersede and answer imported ones."""
    book = Book()
    imported: dict[str, dict[str, str]] = {}  # each ledger's Docket ids → records here
    for name in ("first.jsonl", "second.jsonl"):
        read = docket.read(rows_of(name))
        events, _ = exchange.import_docket(book.state(), WorkspaceConfig(), book.clock(), read)
        book.events += events
        imported[name] = ledger.aliases(book.state(), read.identity)
    first, second = imported["first.jsonl"], imported["second.jsonl"]
    restated = book.claim("Every response carries a version header.", supersedes=second["c2"])
    book.decision(
        "Read the version header before parsing.",
        choice="check the header",
        supports=(f"{restated},{first['c6']}",),
        depends_on=second["d1"],
        answers=second["q1"],
    )
    book.question("Which header names the version?")
    return book


def test_an_export_of_every_kind_reads_in_docket_s_readers() -> None:
    written = docket_out.docket_export(every_kind().state())
    for version in (docket_reader.V049E5AA, docket_reader.PER_KIND):
        docket_reader.check(written.lines, version)
    by_id = {line["id"]: line for line in written.lines}
    assert list(by_id) == [
        *("c1", "c2", "q3", "d4", "d5", "c6", "d4.r1", "d4.1", "c7", "d8", "d9", "d10", "d10.r1"),
        *("c7.1", "d4.2"),  # its own ids (one sequence) and lines, in its order
        *("c11", "c12", "d13", "q14"),  # a ledger numbered per kind: renumbered
        *("c15", "d16", "q17"),  # written here
    ]
    assert written.renumbered == [("c1", "c11"), ("c2", "c12"), ("d1", "d13"), ("q1", "q14")]
    assert by_id["c12"]["supports"] == [["c11"]] and by_id["d13"]["depends_on"] == ["c12"]
    assert by_id["c15"]["supersedes"] == ["c12"] and "supersede_reason" not in by_id["c15"]  # revise
    assert (by_id["d16"]["supports"], by_id["d16"]["depends_on"], by_id["d16"]["answers"]) == (
        [["c15", "c6"]],
        ["d13"],
        ["q14"],
    )
    assert by_id["d4.r1"]["grounds"] == {"c2": "c6"} and by_id["d4.r1"]["reviews"] == "d4"
    assert {line["kind"] for line in written.lines} == {*RECORD_KINDS, "review", "correction"}
    assert {by_id[i]["state"] for i in ("c1", "c7")} == {"accepted", "unassessed"}
    assert by_id["d9"]["state"] == "revoked"


def test_the_same_export_numbered_per_kind_is_refused() -> None:
    """What the export wrote before: each kind numbered on its own. Every version of Docket's
    reader that wants one sequence stops at the first id below one before it."""
    lines: list[dict[str, Any]] = docket_out.docket_lines(every_kind().state())
    per_kind = renumbered(lines, shared=False)
    assert [line["id"] for line in per_kind][:4] == ["c1", "c2", "q1", "d1"]
    for version in SHARED_VERSIONS:
        with pytest.raises(docket_reader.Refused, match=r"line 3: q1: ids must rise \(one sequence"):
            docket_reader.check(per_kind, version)
    docket_reader.check(per_kind, docket_reader.PER_KIND)  # the version that numbers that way


def test_records_written_here_alone_read_in_every_version() -> None:
    """No review and no supersession: nothing the earliest stored reader does not know."""
    book = Book()
    q = book.question("Which parser?")
    c = book.claim("The API returns JSON.", state="unassessed")
    book.decision("Parse with the standard library.", supports=c, answers=q, alternatives=("orjson",))
    lines = docket_out.docket_lines(book.state())
    for version in docket_reader.VERSIONS:
        docket_reader.check(lines, version)
    assert [line["id"] for line in lines] == ["q1", "c2", "d3"]


def reasons_read_back(lines: list[dict[str, Any]]) -> dict[str, str | None]:
    """Each record's supersede reason once the exported lines are imported again, by its id."""
    log = Log()
    log.load(list(enumerate(lines, 1)))
    state = log.state()
    return {
        e.ledger.alias: state.ledger[e.id].reason
        for e in state.entities.values()
        if e.ledger is not None and e.ledger.alias
    }


def test_a_revision_leaves_its_reason_out_and_reads_in_every_version() -> None:
    """Docket's 168d1f2 reader knows no `supersede_reason`, and a supersession that gives none
    is a revision ("revise") to every later reader and to `import docket`: the export writes
    the reason only when it is another, so a ledger of revisions reads in 168d1f2 too, and
    comes back revised."""
    book = Book()
    c1 = book.claim("the API returns JSON")
    book.claim("the API returns JSON with a schema", supersedes=c1, supersede_reason="revise")
    d2 = book.decision("parse with json", choice="stdlib json")
    book.decision("parse with orjson", choice="orjson", supersedes=d2)  # no reason given
    written = docket_out.docket_export(book.state())
    assert [line.get("supersedes") for line in written.lines] == [[], ["c1"], [], ["d3"]]
    assert all("supersede_reason" not in line for line in written.lines)
    for version in docket_reader.VERSIONS:
        docket_reader.check(written.lines, version)
    assert reasons_read_back(written.lines) == {"c1": None, "c2": "revise", "d3": None, "d4": "revise"}


def test_another_reason_is_written_and_comes_back() -> None:
    book = Book()
    c1 = book.claim("the API returns JSON")
    book.claim("the API answers in JSON", supersedes=c1, supersede_reason="restate")
    c3 = book.claim("the disk is fast")
    book.claim("the disk is slow", supersedes=c3, supersede_reason="reverse")
    written = docket_out.docket_export(book.state())
    assert [line.get("supersede_reason") for line in written.lines] == [None, "restate", None, "reverse"]
    for version in (docket_reader.V049E5AA, docket_reader.PER_KIND):
        docket_reader.check(written.lines, version)
    with pytest.raises(docket_reader.Refused, match="supersede_reason"):  # before it knew reasons
        docket_reader.check(written.lines, docket_reader.V168D1F2)
    assert reasons_read_back(written.lines) == {"c1": None, "c2": "restate", "c3": None, "c4": "reverse"}
