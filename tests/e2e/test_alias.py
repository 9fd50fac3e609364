"""The alias table: a verb added there is a command; set and restore change a verb's default."""

from __future__ import annotations

from typing import Any

from tests.support.selfrun import Store


def row(table: list[dict[str, Any]], verb: str) -> dict[str, Any]:
    [found] = [r for r in table if r["verb"] == verb]
    return found


def test_alias_add_set_restore(store: Store) -> None:
    table = store.json(
        "alias", "add", "sprint", "--label", "sprint", "--exposure", "index", "--priority", "25"
    )
    assert row(table, "sprint") == {
        "verb": "sprint",
        "label": "sprint",
        "exposure": "index",
        "priority": 25,
        "edited": True,
    }
    sprint = store.add("sprint", "two week push")

    table = store.json("alias", "set", "goal", "--exposure", "index")
    assert (row(table, "goal")["exposure"], row(table, "goal")["edited"]) == ("index", True)
    indexed = store.add("goal", "goal while edited")

    table = store.json("alias", "restore", "goal")
    assert row(table, "goal") == {
        "verb": "goal",
        "label": "goal",
        "exposure": "full",
        "priority": 0,
        "edited": False,
    }
    restored = store.add("goal", "goal after restore")

    rows = store.by_id()
    placed = {
        i: (rows[i]["labels"], rows[i]["exposure"], rows[i]["priority"]) for i in (sprint, indexed, restored)
    }
    assert placed == {
        sprint: (["sprint"], "index", 25),
        indexed: (["goal"], "index", 0),
        restored: (["goal"], "full", 0),
    }


def test_the_implied_add_takes_a_subcommand_name_after_add_or_dashes(store: Store) -> None:
    store.ok("idea", "add", "list")
    store.ok("idea", "add", "--", "-x")
    store.ok("idea", "--", "confirm")
    store.ok("idea", "--", "--all")
    texts = sorted(row["text"] for row in store.json("idea", "list"))
    assert texts == ["--all", "-x", "confirm", "list"]
    assert "add --" in " ".join(store.ok("idea", "--help").split())
