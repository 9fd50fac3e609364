"""Docket's two id numberings read alike.

The stored versions of Docket's `ledger.py` disagree on how ids are numbered: most refuse
any id not above every earlier one ("global sequence must increase monotonically": `c1`,
`d2`, `q3`), the ledgers Docket writes now number each kind on its own (`c1`, `c2`, `d1`).
selfhub's reader (`service/core/ledger/docket.py`) requires only that each kind's numbers rise,
which both numberings satisfy, and a ledger that switched midway (written by one version,
appended to by the other) too. The same ledger numbered either way imports to the same rows.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from service.core.ledger import docket
from tests.support.docket_ledgers import RECORD_KINDS, docket_ledgers, renumbered
from tests.unit.test_docket_round_trip import imported, rows


def by_position(ledger: list[dict[str, Any]]) -> dict[str, int]:
    return {line["id"]: n for n, line in enumerate(ledger) if line["kind"] in RECORD_KINDS}


def positioned(ledger: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Each record's row, keyed and cross-referenced by its line's position, not its id."""
    place = {alias: str(n) for alias, n in by_position(ledger).items()}

    def named(value: Any) -> Any:
        if isinstance(value, str):
            return place.get(value, value)
        if isinstance(value, list):
            return [named(v) for v in value]
        if isinstance(value, dict):
            return {k: named(v) for k, v in value.items() if k != "alias"}
        return value

    return {int(place[alias]): named(row) for alias, row in rows(imported(ledger).state()).items()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docket_ledgers())
def test_a_ledger_reads_the_same_in_either_numbering(ledger: list[dict[str, Any]]) -> None:
    shared, per_kind = renumbered(ledger, shared=True), renumbered(ledger, shared=False)
    numbers = [int(line["id"][1:]) for line in shared if line["kind"] in RECORD_KINDS]
    assert numbers == sorted(set(numbers))  # one sequence: what every stored reader accepts
    assert positioned(shared) == positioned(per_kind)


def test_a_ledger_that_switched_numbering_midway_reads() -> None:
    """Older Docket wrote c1, d2, q3 (one sequence); a newer one appended per kind: c2 (its
    claims' next), d3, q4 — each kind's numbers still rise."""
    ts = {"ts": "2026-10-01T08:00:00+00:00", "author": "ada", "session": "", "branch": ""}
    lines = [
        {"schema": 2, "kind": "claim", "id": "c1", "text": "Jobs retry.", "state": "accepted"},
        {"schema": 2, "kind": "decision", "id": "d2", "text": "Retry thrice.", "state": "adopted",
         "choice": "3"},
        {"schema": 2, "kind": "question", "id": "q3", "text": "How often?", "state": "open"},
        {"schema": 2, "kind": "claim", "id": "c2", "text": "Jobs time out.", "state": "accepted"},
        {"schema": 2, "kind": "decision", "id": "d3", "text": "Time out at 30s.", "state": "adopted",
         "choice": "30s", "depends_on": ["c2"], "answers": ["q3"]},
    ]  # fmt: skip
    read = docket.read([(n, line | ts) for n, line in enumerate(lines, 1)])
    assert [r.id for r in read.records] == ["c1", "d2", "q3", "c2", "d3"]
