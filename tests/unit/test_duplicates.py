"""The duplicate rule of add commands (`service/core/commands/commands.py: _not_said_already`) on
the in-memory store: a record with the label and text of a live record of its log is refused,
naming it, unless the command says `duplicate`; an event posted from outside is not judged by
it (a command's rule: a post is a fact written elsewhere)."""

from __future__ import annotations

import json

import pytest

from service.app import execute, post, queries
from service.app.memory import MemoryStore
from service.app.workspace import Workspace
from service.core.commands.requests import Add, ProjectAdd, Retract
from service.core.errors import Refused
from service.core.events import posted
from service.core.events.events import payload_of
from service.core.problems import REFUSED, problem


@pytest.fixture
def ws() -> Workspace:
    store = MemoryStore()
    execute(store.workspace(None), ProjectAdd(slug="app"))
    return store.workspace("app")


def added(ws: Workspace, command: Add) -> str:
    return str(payload_of(execute(ws, command)[0]).entity)


def texts(ws: Workspace) -> list[str]:
    return [str(row["text"]) for row in queries.records(ws, False).rows]


def test_the_same_label_and_text_is_refused_naming_the_live_record(ws: Workspace) -> None:
    first = added(ws, Add(text="add a cache", preset="goal"))
    with pytest.raises(Refused) as refused:
        execute(ws, Add(text="add a cache", preset="goal"))
    assert refused.value.code == "duplicate" and refused.value.field == "duplicate"
    assert first in str(refused.value) and refused.value.about["id"] == first
    assert (problem("duplicate").exit, problem("duplicate").status) == (REFUSED, 409)
    assert texts(ws) == ["add a cache"]


def test_duplicate_adds_it_anyway_and_whitespace_around_the_text_is_the_same_text(ws: Workspace) -> None:
    added(ws, Add(text="add a cache", preset="goal"))
    with pytest.raises(Refused):
        execute(ws, Add(text="  add a cache\n", preset="goal"))
    added(ws, Add(text="add a cache", preset="goal", duplicate=True))
    assert texts(ws) == ["add a cache", "add a cache"]


def test_every_kind_is_judged_search_exposure_and_ledger_records_too(ws: Workspace) -> None:
    for preset in ("work", "idea", "claim", "question"):
        added(ws, Add(text=f"the same {preset}", preset=preset))
        with pytest.raises(Refused):
            execute(ws, Add(text=f"the same {preset}", preset=preset))


def test_another_label_a_retracted_record_or_the_one_superseded_is_no_duplicate(ws: Workspace) -> None:
    goal = added(ws, Add(text="add a cache", preset="goal"))
    added(ws, Add(text="add a cache", preset="idea"))
    added(ws, Add(text="add a cache", preset="goal", supersedes=goal))
    gone = added(ws, Add(text="tests first", preset="convention"))
    execute(ws, Retract(record=gone, why="not ours"))
    added(ws, Add(text="tests first", preset="convention"))
    assert sorted(texts(ws)) == ["add a cache", "add a cache", "tests first"]


def test_a_record_of_another_log_is_no_duplicate(ws: Workspace) -> None:
    added(ws, Add(text="add a cache", preset="goal"))
    added(ws, Add(text="add a cache", preset="goal", scope="workspace"))  # the workspace log's


def test_a_posted_event_is_not_judged_by_the_rule(ws: Workspace) -> None:
    added(ws, Add(text="add a cache", preset="goal"))
    payload = {"text": "add a cache", "labels": ["goal"]}
    event = {"type": "entity.confirmed", "project": "app", "payload": payload}
    post(ws, posted.decode(json.dumps({"events": [event]}).encode()))
    assert texts(ws) == ["add a cache", "add a cache"]
