"""Time travel (`--at` an event id or a date) folds a log prefix; `--history` lists events."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.support.selfrun import Store


@pytest.fixture(scope="module")
def story(module_store: Store) -> dict[str, str]:
    """first and doomed added; doomed retracted; later added."""
    first = module_store.add("idea", "first")
    doomed = module_store.add("idea", "doomed")
    module_store.ok("idea", "retract", doomed, "--why", "not needed")
    later = module_store.add("idea", "later")
    events = module_store.json("log")
    [added] = [e for e in events if e["id"] == doomed]
    return {"first": first, "doomed": doomed, "later": later, "doomed_ts": added["ts"]}


def live(store: Store, *args: str) -> set[str]:
    return {row["text"] for row in store.rows(*args)}


def test_at_folds_the_prefix(module_store: Store, story: dict[str, str]) -> None:
    assert live(module_store, "--at", story["doomed"]) == {"first", "doomed"}, (
        "at the event that added `doomed`: `later` is not yet added, `doomed` not yet retracted"
    )
    assert live(module_store, "--at", story["doomed_ts"]) == {"first", "doomed"}

    today = dt.datetime.now(dt.UTC).date()
    assert live(module_store, "--at", (today - dt.timedelta(days=1)).isoformat()) == set(), (
        "records added today are live at yesterday's end"
    )
    assert live(module_store, "--at", today.isoformat()) == {"first", "later"}


def test_history_lists_a_records_events_oldest_first(module_store: Store, story: dict[str, str]) -> None:
    shown = module_store.json("state", "show", story["doomed"][:12], "--history")
    assert shown["id"] == story["doomed"] and shown["status"] == "retracted"
    history = shown["history"]
    assert [e["type"] for e in history] == ["entity.confirmed", "entity.retracted"], history
    assert [e["id"] for e in history] == sorted(e["id"] for e in history)
    assert all(e["payload"]["entity"] == story["doomed"] for e in history)
    assert history[0]["id"] == story["doomed"] and history[1]["payload"]["why"] == "not needed"
