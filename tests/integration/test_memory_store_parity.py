"""The in-memory store answers as the store on disk does, and so does the service's writer (a
live workspace whose group commit is the transaction): the same command values, run through
`execute` on each, and the same posted events, run through `post`, give the same events and
the same read documents, once each store's ids and times are named by their order of
appearance."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

import msgspec

from service.adapters.store import Store
from service.app import execute, post, queries
from service.app.memory import MemoryStore
from service.app.workspace import Workspace
from service.core.commands.requests import (
    Add,
    AnyCommand,
    Cover,
    Decline,
    Done,
    Place,
    ProjectAdd,
    Report,
    Start,
)
from service.core.events import posted
from service.core.events.events import Event, Origin, payload_of
from service.server.live.space import LiveWorkspace
from service.server.live.view import View, reading
from tests.support.live import live_workspace

HUMAN = Origin("human", True)
ID_LIKE = re.compile(r"\b0[0-9a-hjkmnp-tv-z]{7,25}\b")
SHORT = re.compile(r'"short":"[0-9a-hjkmnp-tv-z]+"')
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def scenario(run: Callable[[str | None, AnyCommand], list[Event]]) -> list[Event]:
    """A project's first steps; later commands name the records earlier ones made."""
    events = run(None, ProjectAdd(slug="app", description="a sample app"))
    [goal] = run("app", Add(text="teams share one typed project state", preset="goal"))
    events.append(goal)
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
    aim = str(payload_of(goal).entity)
    events += run("app", Place(record=aim, priority=3, why="others first", proposed=True))
    events += run("app", Decline(record=aim, why="it stays first"))
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


def through_the_writer(live: LiveWorkspace, write: Callable[[View], object]) -> object:
    """`write` run by the workspace's writer thread on a view whose transactions are its batch."""

    async def submit() -> object:
        job = await live.writer.submit_async(lambda batch: write(View(live, None, HUMAN, batch)), 10.0)
        return job.answer()

    return asyncio.run(submit())


def test_the_service_writer_gives_what_the_store_on_disk_and_in_memory_give(tmp_path: Path) -> None:
    on_disk = Store.init(tmp_path / "store")
    in_memory = MemoryStore()

    def on_live(project: str | None, command: AnyCommand) -> list[Event]:
        def write(view: View) -> list[Event]:
            view.project = project
            return execute(view, command)

        events = through_the_writer(live, write)
        assert isinstance(events, list)
        return events

    with live_workspace(tmp_path) as live:
        live_events = scenario(on_live)
        disk_events = scenario(lambda project, command: execute(Workspace(on_disk, project, HUMAN), command))
        memory_events = scenario(
            lambda project, command: execute(Workspace(in_memory, project, HUMAN), command)
        )
        assert named_by_order(live_events) == named_by_order(disk_events) == named_by_order(memory_events)
        with reading(live, "app", HUMAN) as view:
            live_docs = documents(view, str(payload_of(live_events[1]).entity))
        disk_docs = documents(Workspace(on_disk, "app", HUMAN), str(payload_of(disk_events[1]).entity))
        assert named_by_order(live_docs) == named_by_order(disk_docs)
        assert live.store.read("app").events == live_events[1:]


POSTS = [
    {"events": [{"type": "project.added", "project": "", "payload": {"slug": "app", "description": "x"}}]},
    {
        "events": [
            {
                "type": "entity.confirmed",
                "project": "app",
                "payload": {"text": "ship it", "labels": ["goal"]},
            },
            {
                "type": "entity.confirmed",
                "project": "",
                "payload": {"text": "be kind", "labels": ["convention"]},
            },
        ]
    },
    {"events": [{"type": "entity.confirmed", "project": "nowhere", "payload": {"text": "lost"}}]},
]


def test_posted_events_run_alike_on_the_service_writer_on_disk_and_in_memory(
    tmp_path: Path,
) -> None:
    """`post` on each store's unit of work: the same events, all of a post or none of it (the
    third post names no project: refused, nothing written)."""
    on_disk = Store.init(tmp_path / "store")
    in_memory = MemoryStore()

    def each(write: Callable[[dict[str, object]], object]) -> list[object]:
        answers: list[object] = []
        for body in POSTS:
            try:
                answers.append(write(body))
            except Exception as exc:
                answers.append(type(exc).__name__ + ": " + str(exc))
        return answers

    def decoded(body: dict[str, object]) -> posted.PostEvents:
        return posted.decode(msgspec.json.encode(body))

    with live_workspace(tmp_path) as live:
        answers = [
            each(lambda body: through_the_writer(live, lambda view: post(view, decoded(body)))),
            each(lambda body: post(Workspace(on_disk, None, HUMAN), decoded(body))),
            each(lambda body: post(Workspace(in_memory, None, HUMAN), decoded(body))),
        ]
        assert "is no project of this workspace" in str(answers[0][2])
        logs = [[s.read(log).events for log in ("", "app")] for s in (live.store, on_disk, in_memory)]
    assert named_by_order(answers[0]) == named_by_order(answers[1]) == named_by_order(answers[2])
    assert named_by_order(logs[0]) == named_by_order(logs[1]) == named_by_order(logs[2])
    assert [len(events) for events in logs[0]] == [2, 1]
