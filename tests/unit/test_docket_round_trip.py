"""`export docket` writes what `import docket` reads back the same: random Docket ledgers
imported, exported and imported again give the same rows."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from service.model import docket, exchange, views
from service.model.state import State
from tests.docket_ledgers import docket_ledgers
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
        row = extra | {
            "text": e.text,
            "why": e.why,
            "status": e.status,
            "exposure": e.exposure,
            "priority": e.priority,
        }
        found[alias[record_id]] = named(row)
    return found


def imported(lines: list[dict[str, Any]]) -> Log:
    log = Log()
    log.load(list(enumerate(lines, 1)))
    return log


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docket_ledgers())
def test_import_export_import_gives_the_same_rows(ledger: list[dict[str, Any]]) -> None:
    first = imported(ledger)
    exported = exchange.docket_lines(first.state())
    docket.read(list(enumerate(exported, 1)))  # Docket's reader rules accept the file
    second = imported(exported)
    assert rows(second.state()) == rows(first.state())
    again = exchange.docket_lines(second.state())
    assert [{k: v for k, v in line.items() if k != "ts"} for line in again] == [
        {k: v for k, v in line.items() if k != "ts"} for line in exported
    ]


def test_an_exported_record_keeps_its_docket_id_and_fields() -> None:
    from tests.unit.test_ledger_docket import rows_of

    log = Log()
    log.load(rows_of("first.jsonl"))
    exported = {line["id"]: line for line in exchange.docket_lines(log.state())}
    d4 = exported["d4"]
    assert d4["text"] == "Parse API responses with the standard library json module."
    assert d4["evidence"] == [{"ref": "bench/parse.md", "checked_at": "2026-09-05T08:00:00+00:00"}]
    assert (d4["choice"], d4["alternatives"], d4["revisit"]) == (
        "stdlib json",
        ["stdlib json"],
        "when orjson ships wheels everywhere",
    )
    assert exported["c6"]["supersedes"] == ["c2"] and exported["c6"]["supersede_reason"] == "revise"
    assert exported["d9"]["state"] == "revoked" and exported["d9"]["pinned"] is True
    assert exported["d4.r1"]["grounds"] == {"c2": "c6"}
    assert set(exported) == {"c1", "c2", "q3", "d4", "d5", "c6", "c7", "d8", "d9", "d10", "d4.r1"}


def test_records_written_here_export_as_lines_docket_reads() -> None:
    from tests.unit.test_ledger import Book

    book = Book()
    q1 = book.question("which parser?")
    book.question("which parser for the CLI?", answers=q1)  # a question answering one: Docket has none
    c = book.claim("the API returns JSON", evidence=("docs/api.md", ""))
    book.decision("parse with the stdlib", supports=c, answers=q1, revisit="2027-01-31")
    book.assess(c, "disputed")
    exported = exchange.docket_lines(book.state())
    read = docket.read(list(enumerate(exported, 1)))
    by_id = {r.id: r.fields for r in read.records}
    assert sorted(by_id) == ["c1", "d1", "q1", "q2"]  # each kind numbered on its own
    assert by_id["q2"]["answers"] == []
    assert [e.ref for e in by_id["c1"]["evidence"]] == ["docs/api.md"]
    assert by_id["c1"]["state"] == "disputed"
    assert by_id["d1"]["choice"] == "parse with the stdlib"  # none recorded: Docket's reader wants one
    assert (by_id["d1"]["supports"], by_id["d1"]["answers"], by_id["d1"]["revisit"]) == (
        [["c1"]],
        ["q1"],
        "2027-01-31",
    )
