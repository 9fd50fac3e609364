"""The application layer on the in-memory store (`service/app/memory.py`): commands run through
`execute`, and what they wrote is read back through the queries — no git, no filesystem.
The store keeps only lines the append gate passed and folds them as the store on disk does."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from service.app import execute, queries
from service.app.memory import MemoryStore
from service.app.workspace import Workspace
from service.core.commands.requests import Add, Done, ProjectAdd, Report, RunStarted, Start
from service.core.errors import Invalid, Refused
from service.core.events.events import Event, canonical, payload_of
from service.core.fold.fold import fold_all


def entity(event: Event) -> str:
    return str(payload_of(event).entity)


@pytest.fixture
def store() -> MemoryStore:
    store = MemoryStore()
    execute(store.workspace(None), ProjectAdd(slug="app", description="a sample app"))
    return store


@pytest.fixture
def ws(store: MemoryStore) -> Workspace:
    return store.workspace("app")


def test_a_project_and_its_records_read_back_through_the_queries(store: MemoryStore, ws: Workspace) -> None:
    execute(ws, Add(text="teams share one typed project state", preset="goal"))
    [work] = execute(ws, Add(text="write the docs", preset="work"))
    execute(ws, Start(record=entity(work)))

    assert store.logs() == ["", "app"]
    listed = queries.records(ws, False)
    assert [row["text"] for row in listed.rows] == ["teams share one typed project state", "write the docs"]
    status = queries.status(ws)
    assert msgspec.to_builtins(status)["goal"] == "teams share one typed project state"
    assert msgspec.to_builtins(status)["work"]["active"] == 1
    context = queries.context(ws, None)
    assert context.of_project()
    shown = msgspec.json.encode(context.fitted()).decode()
    assert "write the docs" in shown and "a sample app" in shown
    assert [unit.word for unit in queries.work_list(ws, False).units] == ["in-progress"]


def test_outside_a_project_the_context_is_the_overview(store: MemoryStore) -> None:
    doc = msgspec.to_builtins(queries.context(store.workspace(None), None).fitted())
    assert "app" in str(doc)


def test_what_is_kept_is_the_canonical_line_of_each_event_returned(store: MemoryStore, ws: Workspace) -> None:
    before = len(store.lines["app"]) if "app" in store.lines else 0
    events = execute(ws, Add(text="store events as JSONL in git", preset="decide", why="diffable"))
    assert store.lines["app"][before:] == [canonical(e) for e in events]
    assert store.read("app").events[before:] == events
    assert store.state("app")[0] == fold_all(store.read("app").events)


def test_a_refused_command_appends_nothing(store: MemoryStore, ws: Workspace) -> None:
    [work] = execute(ws, Add(text="write the docs", preset="work"))
    execute(ws, Start(record=entity(work)))
    lines = list(store.lines["app"])
    with pytest.raises(Refused) as refused:
        execute(ws, Done(record=entity(work)))
    assert refused.value.code == "evidence-required"
    assert store.lines["app"] == lines
    execute(ws, Report(record=entity(work), text="docs written", artifact="docs/index.md"))
    execute(ws, Done(record=entity(work)))
    assert queries.work_list(ws, True).done == 1


def test_the_append_gate_refuses_a_linked_checkouts_path(store: MemoryStore, ws: Workspace) -> None:
    """The command's own checks cannot know this machine's paths: the gate, given the store's
    local facts, refuses them."""
    store.local.link("app", Path("/srv/checkouts/app"))
    lines = list(store.lines.get("app", []))
    with pytest.raises(Refused) as refused:
        execute(ws, Add(text="see /srv/checkouts/app/notes.md", preset="idea"))
    assert refused.value.code == "sanitize"
    assert store.lines.get("app", []) == lines


def test_the_append_gate_refuses_ids_not_after_the_log(store: MemoryStore, ws: Workspace) -> None:
    [old] = execute(ws, Add(text="an early idea", preset="idea"))
    with store.transaction("app") as tx, pytest.raises(Invalid, match="is not after"):
        tx.append([msgspec.structs.replace(old, ts=tx.now())])


def test_a_relation_to_another_logs_record_names_where_it_is(store: MemoryStore, ws: Workspace) -> None:
    [claim] = execute(ws, Add(text="the API returns JSON", preset="claim", scope="workspace"))
    with pytest.raises(Invalid) as refused:
        execute(ws, Add(text="parse it with json", preset="claim", supports=(entity(claim),)))
    assert refused.value.code == "other-log"


def test_a_run_started_keeps_its_pid_on_this_machine_only(store: MemoryStore, ws: Workspace) -> None:
    [work] = execute(ws, Add(text="run the suite", preset="work"))
    [started] = execute(ws, RunStarted(record=entity(work), pid=4242))
    assert store.local.pids == {entity(work): (4242, "app")}
    assert b"4242" not in canonical(started)
    assert [run.local for run in queries.work_show(ws, entity(work)).runs] == ["running"]


def test_settings_pass_the_same_check_as_on_disk(store: MemoryStore, ws: Workspace) -> None:
    from service.app import settings

    assert settings.tokens(ws, 3.5).tokens_per_char == 3.5
    assert store.config().tokens_per_char == 3.5


def test_a_superself_import_needs_a_store_on_disk(ws: Workspace, tmp_path: Path) -> None:
    from service.app import settings

    with pytest.raises(Invalid, match="store on disk"):
        settings.import_superself(ws, str(tmp_path))


def docket_lines() -> tuple[tuple[int, object], ...]:
    text = (Path(__file__).resolve().parents[1] / "fixtures" / "docket" / "first.jsonl").read_text("utf-8")
    return tuple((n, json.loads(line)) for n, line in enumerate(text.splitlines(), 1) if line.strip())


def test_a_docket_import_is_a_command_like_any_other() -> None:
    """`execute` of the command value (what an HTTP body decodes to) and the CLI's import,
    which also reports what it did, append the same events."""
    from service.app.writes import execute_import
    from service.core.commands.requests import ImportDocket, decode

    command = ImportDocket(lines=docket_lines())
    assert decode(msgspec.json.encode(command)) == command
    written = []
    for run in (execute, lambda ws, c: execute_import(ws, c)[0]):
        store = MemoryStore()
        execute(store.workspace(None), ProjectAdd(slug="app"))
        written.append(run(store.workspace("app"), command))
        assert store.read("app").events == written[-1]
    assert written[0] == written[1] and written[0]
    store = MemoryStore()
    execute(store.workspace(None), ProjectAdd(slug="app"))
    _, summary = execute_import(store.workspace("app"), command)
    assert summary["imported"] == summary["records"] > 0
    again, second = execute_import(store.workspace("app"), command)
    assert again == [] and second["imported"] == 0 and second["skipped"] == summary["records"]


def test_time_travel_search_history_and_recent_events_read_the_memory_store(ws: Workspace) -> None:
    [goal] = execute(ws, Add(text="teams share one typed project state", preset="goal"))
    [work] = execute(ws, Add(text="write the docs", preset="work"))
    execute(ws, Start(record=entity(work)))

    before = queries.records(ws, False, at=goal.id)
    assert [row["text"] for row in before.rows] == ["teams share one typed project state"]
    assert [row["text"] for row in queries.search(ws, "docs", False, None).rows] == ["write the docs"]
    history = queries.record(ws, entity(work), True, None).history or []
    assert [row["type"] for row in history] == ["entity.confirmed", "entity.started"]
    assert [row["id"] for row in queries.recent(ws, 2)] == [work.id, history[-1]["id"]]
