"""Docket's two id numberings read alike.

The stored versions of Docket's `ledger.py` disagree on how ids are numbered: most refuse
any id not above every earlier one ("global sequence must increase monotonically": `c1`,
`d2`, `q3`), the ledgers Docket writes now number each kind on its own (`c1`, `c2`, `d1`).
selfhub's reader (`service/model/docket.py`) requires only that each kind's numbers rise,
which both numberings satisfy, and a ledger that switched midway (written by one version,
appended to by the other) too. The same ledger numbered either way imports to the same rows.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from service.model import docket
from tests.docket_ledgers import docket_ledgers
from tests.unit.test_docket_round_trip import imported, rows

RECORD_KINDS = ("claim", "decision", "question")


def renumbered(ledger: list[dict[str, Any]], shared: bool) -> list[dict[str, Any]]:
    """The ledger with its records numbered in one sequence across kinds (`shared`) or per
    kind, every reference renamed to match."""
    names: dict[str, str] = {}
    counts: dict[str, int] = {}
    for line in ledger:
        if line["kind"] in RECORD_KINDS:
            key = "all" if shared else line["kind"]
            counts[key] = counts.get(key, 0) + 1
            names[line["id"]] = f"{line['id'][0]}{counts[key]}"
    return [_renamed(line, names) for line in ledger]


def _renamed(line: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    def name(value: str) -> str:
        head, dot, rest = value.partition(".")
        return names.get(head, head) + dot + rest

    out = dict(line)
    out["id"] = name(line["id"])
    for field in ("depends_on", "answers", "supersedes"):
        if field in out:
            out[field] = [name(v) for v in out[field]]
    if "supports" in out:
        out["supports"] = [[name(v) for v in group] for group in out["supports"]]
    for field in ("corrects", "reviews"):
        if field in out:
            out[field] = name(out[field])
    if "grounds" in out:
        out["grounds"] = {name(k): name(v) for k, v in out["grounds"].items()}
    return out


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
