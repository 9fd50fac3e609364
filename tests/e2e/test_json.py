"""Every read command with --json prints exactly one JSON document."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.selfrun import Store, describe

ROW_KEYS = {
    "id",
    "project",
    "labels",
    "text",
    "why",
    "status",
    "execution",
    "exposure",
    "priority",
    "scope",
    "target",
    "criteria",
    "covered",
}


@pytest.fixture(scope="module")
def ids(module_store: Store) -> dict[str, str]:
    goal = module_store.add(
        "objective",
        "ship the sync beta",
        "--why",
        "users asked",
        "--target",
        "2099-03-31",
        "--criterion",
        "beta tag pushed",
        "--criterion",
        "docs published",
    )
    module_store.ok("state", "cover", goal, "1")
    unit = module_store.add("work", "write the sync")
    module_store.ok("work", "start", unit)
    return {"goal": goal, "work": unit}


def _ids(rows: list[dict[str, Any]]) -> set[str]:
    return {row["id"] for row in rows}


# command → (arguments, what the one document must say about the module's records)
READS: dict[str, tuple[tuple[str, ...], Callable[[Any, dict[str, str]], bool]]] = {
    "context": (("context",), lambda d, i: "ship the sync beta" in json.dumps(d)),
    "status": (("status",), lambda d, i: d["objectives_open"] == 1 and d["work"]["active"] == 1),
    "search": (("search", "sync", "--all"), lambda d, i: {i["goal"], i["work"]} <= _ids(d)),
    "log": (("log",), lambda d, i: [e["type"] for e in d].count("entity.covered") == 1),
    "fold": (("fold",), lambda d, i: {r["log"]: r["entities"] for r in d["logs"]}["app"] == 2),
    "state list": (("state", "list"), lambda d, i: _ids(d) == {i["goal"], i["work"]}),
    "state show": (
        ("state", "show", "{goal}", "--history"),
        lambda d, i: d["id"] == i["goal"] and len(d["history"]) == 2,
    ),
    "work list": (("work", "list"), lambda d, i: isinstance(d, list) and _ids(d) == {i["work"]}),
    "work show": (("work", "show", "{work}"), lambda d, i: d["id"] == i["work"]),
    "project list": (("project", "list"), lambda d, i: [r["slug"] for r in d] == ["app"]),
    "alias": (("alias",), lambda d, i: "goal" in {r["verb"] for r in d}),
    "tokens": (("tokens",), lambda d, i: d["full_tokens"] == 1000),
}


@pytest.mark.parametrize("command", list(READS))
def test_read_prints_one_json_document(module_store: Store, ids: dict[str, str], command: str) -> None:
    args, says = READS[command]
    proc = module_store.run(*(a.format(**ids) for a in args), "--json")
    assert proc.returncode == 0, describe(proc)
    assert proc.stderr == "", describe(proc)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"not one JSON document ({exc}):\n{proc.stdout}") from exc
    assert says(doc, ids), f"`self {command} --json` misreports the store:\n{proc.stdout}"


def test_state_list_rows_carry_every_field(module_store: Store, ids: dict[str, str]) -> None:
    rows = module_store.by_id()
    missing = {i: sorted(ROW_KEYS - set(row)) for i, row in rows.items() if ROW_KEYS - set(row)}
    assert not missing, missing
    goal = rows[ids["goal"]]
    assert {k: goal[k] for k in sorted(ROW_KEYS)} == {
        "covered": ["beta tag pushed"],
        "criteria": ["beta tag pushed", "docs published"],
        "execution": None,
        "exposure": "full",
        "id": ids["goal"],
        "labels": ["objective"],
        "priority": 10,
        "project": "app",
        "scope": "project",
        "status": "confirmed",
        "target": "2099-03-31",
        "text": "ship the sync beta",
        "why": "users asked",
    }
    assert rows[ids["work"]]["execution"] == "in-progress"
