"""The in-memory store answers as the store on disk does: the same command values, run through
`execute` on each, give the same events and the same read documents, once each store's ids
and times are named by their order of appearance."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import msgspec

from service.app import execute, queries
from service.app.memory import MemoryStore
from service.model.events import Event, Origin, payload_of
from service.model.requests import Add, AnyCommand, Cover, Done, ProjectAdd, Report, Start
from service.store import Store
from service.workspace import Workspace

HUMAN = Origin("human", True)
ID_LIKE = re.compile(r"\b0[0-9a-hjkmnp-tv-z]{7,25}\b")
SHORT = re.compile(r'"short":"[0-9a-hjkmnp-tv-z]+"')
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def scenario(run: Callable[[str | None, AnyCommand], list[Event]]) -> list[Event]:
    """A project's first steps; later commands name the records earlier ones made."""
    events = run(None, ProjectAdd(slug="app", description="a sample app"))
    events += run("app", Add(text="teams share one typed project state", preset="goal"))
    [work] = run("app", Add(text="write the docs", preset="work", criteria=("every command has a page",)))
    unit = str(payload_of(work).entity)
    [claim] = run("app", Add(text="the API returns JSON", preset="claim", state="accepted"))
    ground = str(payload_of(claim).entity)
    events += [work, claim]
    events += run("app", Add(text="parse with the stdlib", preset="decide", depends_on=(ground,)))
    events += run("app", Start(record=unit))
    events += run("app", Report(record=unit, text="pages written", artifact="docs/index.md"))
    events += run("app", Cover(record=unit, criterion="every command has a page"))
    events += run("app", Done(record=unit))
    return events


def documents(ws: Workspace, first: str) -> list[object]:
    return [
        queries.status(ws),
        queries.context(ws, None).fitted(),
        queries.records(ws, True).rows,
        queries.work_list(ws, True),
        queries.record(ws, first, True, None).document(),
        queries.refold(ws),
    ]


def named_by_order(docs: object) -> str:
    """The JSON of `docs` with every id (or short id) and time replaced by its rank of appearance.

    A record's `short` id is as long as it takes to tell it from the other records, so it
    depends on how close the ids of each store fall: on disk two ids minted in the same
    milliseconds share more characters than the in-memory store's spaced ones, and a short id
    unique among records may be a prefix of an event's id. Short ids are compared as present,
    not by value."""
    text = SHORT.sub('"short":"<short>"', msgspec.json.encode(docs).decode())
    full = sorted(set(re.findall(r"\b0[0-9a-hjkmnp-tv-z]{25}\b", text)))
    rank = {i: n for n, i in enumerate(full)}

    def id_name(match: re.Match[str]) -> str:
        found = [rank[i] for i in full if i.startswith(match.group())]
        return f"<id {found[0]}>" if len(found) == 1 else match.group()

    times = {t: n for n, t in enumerate(sorted(set(TIME.findall(text))))}
    return TIME.sub(lambda m: f"<time {times[m.group()]}>", ID_LIKE.sub(id_name, text))


def test_the_same_commands_give_the_same_events_and_documents(tmp_path: Path) -> None:
    on_disk = Store.init(tmp_path / "store")
    in_memory = MemoryStore()

    def runner(store: Store | MemoryStore) -> Callable[[str | None, AnyCommand], list[Event]]:
        return lambda project, command: execute(Workspace(store, project, HUMAN), command)

    disk_events = scenario(runner(on_disk))
    memory_events = scenario(runner(in_memory))
    assert named_by_order(disk_events) == named_by_order(memory_events)
    first = str(payload_of(disk_events[1]).entity)
    mine = str(payload_of(memory_events[1]).entity)
    disk_docs = documents(Workspace(on_disk, "app", HUMAN), first)
    memory_docs = documents(Workspace(in_memory, "app", HUMAN), mine)
    assert named_by_order(disk_docs) == named_by_order(memory_docs)
