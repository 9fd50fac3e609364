"""The search index over a real data directory: real stores, real SQLite, FTS5.

The index must hold exactly the live records of the folded logs however the logs grew, and
answer a search exactly as `self search` (Workspace.search, the model's ranking) does.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from unittest.mock import patch

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.adapters.data.workspaces import Data
from service.adapters.index import BadLimit, QueryTooLong, SearchIndex, query
from service.adapters.index.query import MAX_LIMIT, MAX_QUERY, MAX_TERMS
from service.adapters.store import layout
from service.app.workspace import Workspace
from service.core.events.events import Event, Origin, canonical
from service.core.fold.fold import fold_all
from tests.support.builders import AGENT, Log
from tests.support.eventcheck import checked_tempdir
from tests.support.strategies import (
    LABELS,
    SEARCH_LOGS,
    search_logs,
    search_queries,
)

HUMAN = Origin("human", True)
SYNTAX = ['"', "*", "-", "NEAR", "near(", "AND", "OR", "NOT", "(", ")", "^", ":", "+", 'a"b', "x*", "-x"]


def append(root: Path, log: str, events: list[Event]) -> None:
    """Append canonical lines to a project's segments, 1,000 to a file, as the store does."""
    folder = root / layout.log_dir(log)
    folder.mkdir(parents=True, exist_ok=True)
    for event in events:
        names = layout.segments(root, log)
        name = names[-1] if names else layout.segment_name(0)
        path = folder / name
        if path.exists() and path.read_bytes().count(b"\n") >= layout.SEGMENT_EVENTS:
            path = folder / layout.segment_name(layout.segment_index(name) + 1)
        with path.open("ab") as handle:
            handle.write(canonical(event))


WORDS = ("alpha", "beta", "ab", "a", "NEAR", '"q"', "x*", "-y", "Ünï", "ß", "İo", "alphabet")


def live_ids(events: list[Event]) -> list[str]:
    return [e.id for e in fold_all(events).entities.values() if e.live]


def self_search(data: Data, q: str, exposure: str | None) -> list[str]:
    """What `self search` answers in workspace `team` with project `app` selected."""
    with data.open("team") as store:
        hits = Workspace(store, "app", HUMAN).search(q, exposure is None, exposure)
    return [e.id for e in hits]


def index_search(index: SearchIndex, q: str, exposure: str | None) -> list[str]:
    return [h.id for h in index.search(q, "app", ["team"], MAX_LIMIT, exposure)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=search_logs(WORDS, LABELS, 30), cuts=st.lists(st.integers(1, 40), max_size=3), data=st.data())
def test_the_index_holds_the_live_records_and_searches_as_self_search_does(
    history: dict[str, list[Event]], cuts: list[int], data: st.DataObject
) -> None:
    with checked_tempdir() as tmp:
        team = Data(Path(tmp) / "data")
        team.add("team").close()
        root = team.path("team")
        done = dict.fromkeys(SEARCH_LOGS, 0)
        with SearchIndex(team) as index:
            for cut in [*sorted(set(cuts)), 10**6]:  # the logs grow in steps, refreshed after each
                for log, events in history.items():
                    if cut > done[log] < len(events):
                        append(root, log, events[done[log] : cut])
                        done[log] = min(cut, len(events))
                index.refresh()
                for log, events in history.items():
                    assert [e.id for e, _ in index.entities("team", log)] == live_ids(events[: done[log]])
            texts = []
            for log, events in history.items():
                whole = fold_all(events)
                held = {e.id: msgspec.msgpack.encode(e) for e, _ in index.entities("team", log)}
                assert held == {i: msgspec.msgpack.encode(e) for i, e in whole.entities.items() if e.live}
                texts += [e.text for e in whole.entities.values() if e.live]
            for _ in range(8):
                q = data.draw(search_queries(texts, SYNTAX))
                exposure = data.draw(st.sampled_from([None, "search", "full", "index"]))
                wanted = self_search(team, q, exposure)
                assert index_search(index, q, exposure) == wanted, q
                common = data.draw(st.sampled_from([1, 2, query.COMMON]))  # counted log by log or not
                with patch.object(query, "COMMON", common):
                    assert index.page(q, "app", ["team"], exposure, 1).matched == len(wanted), q


def written(data: Data, workspace: str, project: str, *texts: str) -> list[str]:
    """Records added through the real write path; their ids."""
    from service.core.commands import commands

    made = []
    with data.open(workspace) as store:
        ws = Workspace(store, project, HUMAN)
        if project not in ws.state("").projects:
            ws.write("", lambda s, c, k: commands.project_add(s, k, project, None))
        for text in texts:
            request = commands.AddRequest(text=text, labels=("note",))
            events = ws.write(project, lambda s, c, k, r=request: commands.add(s, c, k, r))
            made.append(events[-1].id)
    return made


@pytest.fixture
def data(tmp_path: Path) -> Data:
    data = Data(tmp_path / "data")
    data.add("team").close()
    data.add("other").close()
    return data


def test_new_events_advance_the_index_without_a_rebuild(data: Data) -> None:
    written(data, "team", "app", "ship the search index")
    with SearchIndex(data) as index:
        first = index.refresh()
        assert "team/app" in first.rebuilt
        table = index.table("team")  # the rebuild went into FTS5 without its insert trigger
        triggers = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?"
        assert {r[0] for r in index.db.execute(triggers, [table])} >= {f"{table}_ai", f"{table}_ad"}
        assert index.refresh() == type(first)([], [], [])
        (second,) = written(data, "team", "app", "search across projects")
        again = index.refresh()
        assert (again.advanced, again.rebuilt) == (["team/app"], [])
        assert [h.id for h in index.search("across", "app", ["team"])] == [second]


def test_a_confirmation_that_applies_a_waiting_placement_rewrites_the_placed_record(data: Data) -> None:
    log = Log("app")
    proposal = log.entity("a proposal that makes room", "decision", proposed=True)
    placed = log.entity("an older record to move", "note", exposure="full")
    move = {"entity": placed, "exposure": "search", "priority": 3, "why": "room", "pair": proposal}
    log.add("entity.placed", msgspec.json.encode(move), origin=AGENT)  # waits on the proposal
    root = data.path("team")
    append(root, "app", log.events)
    with SearchIndex(data) as index:
        index.refresh()
        assert index.search("older", None, ["team"], exposure="search") == []
        log.add("entity.confirmed", msgspec.json.encode({"entity": proposal}))
        append(root, "app", log.events[-1:])
        assert index.refresh().advanced == ["team/app"]
        indexed = {e.id: e.exposure for e, _ in index.entities("team", "app")}
        assert indexed == {proposal: "search", placed: "search"}
        assert [h.id for h in index.search("older", None, ["team"], exposure="search")] == [placed]


def test_search_covers_only_the_allowed_workspaces_with_the_project_first(data: Data) -> None:
    (ours,) = written(data, "team", "app", "deploy the index")
    (web,) = written(data, "team", "web", "deploy the index deploy again")
    (theirs,) = written(data, "other", "app", "deploy the index elsewhere")
    with SearchIndex(data) as index:
        index.refresh()
        hits = index.search("deploy", "app", ["team"])
        assert [h.id for h in hits] == [ours, web]  # the project first, whatever the rank
        assert [h.id for h in index.search("deploy", "web", ["team"])] == [web, ours]
        assert [(h.workspace, h.project, h.rank) for h in hits] == [("team", "app", 1), ("team", "web", 2)]
        assert (
            hits[0].label == "note" and hits[0].text == "deploy the index" and hits[0].status == "confirmed"
        )
        both = index.search("index", "app", ["team", "other"])
        assert {h.id for h in both[:2]} == {ours, theirs} and both[2].id == web
        assert index.search("deploy", "app", ["other"])[0].id == theirs
        assert index.search("deploy", "app", []) == []
        assert index.search("deploy", "app", ["nowhere"]) == []
        first = index.search("deploy", "app", ["team", "other"], limit=1)
        assert [h.id for h in first] == [index.search("deploy", "app", ["team", "other"])[0].id]
        assert index.page("deploy", "app", ["team", "other"], None, 1).matched == 3


def test_removed_workspaces_and_logs_leave_the_index(data: Data) -> None:
    import shutil

    written(data, "team", "app", "kept record")
    written(data, "team", "web", "gone record")
    written(data, "other", "app", "gone too")
    with SearchIndex(data) as index:
        index.refresh()
        shutil.rmtree(data.path("team") / "projects" / "web")
        shutil.rmtree(data.path("other"))
        dropped = index.refresh().dropped
        assert sorted(dropped) == ["other/", "other/app", "team/web"]
        assert [h.text for h in index.search("record", None, ["team", "other"])] == ["kept record"]
        assert index.search("gone", None, ["team", "other"]) == []


def test_events_inserted_before_the_last_indexed_one_rebuild_the_log(data: Data) -> None:
    log = Log("app")
    first = log.entity("first record")
    early = log.entity("inserted by a sync")
    last = log.entity("last record")
    root = data.path("team")
    inserted = log.events.pop(1)
    append(root, "app", log.events)
    with SearchIndex(data) as index:
        index.refresh()
        segment = root / layout.log_dir("app") / layout.segment_name(0)
        segment.write_bytes(
            b"".join(canonical(e) for e in sorted([*log.events, inserted], key=lambda e: e.id))
        )
        assert index.refresh().rebuilt == ["team/app"]
        assert [e.id for e, _ in index.entities("team", "app")] == [first, early, last]
        assert [h.id for h in index.search("sync", None, ["team"])] == [early]


def test_a_missing_index_or_one_made_by_other_code_is_rebuilt(data: Data) -> None:
    written(data, "team", "app", "a record to find")
    with SearchIndex(data) as index:
        index.refresh()
    with sqlite3.connect(data.index_db) as conn:
        conn.execute("UPDATE meta SET value = 'older code' WHERE key = 'version'")
    conn.close()
    with SearchIndex(data) as index:
        assert index.search("find", None, ["team"]) == []  # emptied: nothing is trusted
        assert "team/app" in index.refresh().rebuilt
        assert len(index.search("find", None, ["team"])) == 1
    for path in data.root.glob("index.sqlite*"):
        path.unlink()
    with SearchIndex(data) as index:
        assert "team/app" in index.refresh().rebuilt
        assert len(index.search("find", None, ["team"])) == 1


@pytest.fixture(scope="module")
def syntax_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchIndex]:
    data = Data(tmp_path_factory.mktemp("syntax") / "data")
    data.add("team").close()
    written(data, "team", "app", 'a "quoted" NEAR(x y) word', "star* and -minus OR AND NOT ^col:on", "plain")
    with SearchIndex(data) as index:
        index.refresh()
        yield index


@settings(max_examples=200, deadline=None)
@given(
    q=st.text(st.sampled_from("ab \"*-NEAR()^:+{}[],.ORANDNOT\\'\x00é "), max_size=40) | st.text(max_size=40)
)
def test_any_query_is_taken_literally_and_never_errors(syntax_index: SearchIndex, q: str) -> None:
    hits = syntax_index.search(q, "app", ["team"], MAX_LIMIT)
    terms = q.lower().split()
    for hit in hits:
        assert any(t in hit.text.lower() + "\nnote\n" for t in terms) or not terms


@pytest.mark.parametrize(
    ("q", "text"),
    [
        ('"quoted"', 'a "quoted" NEAR(x y) word'),
        ("near(x", 'a "quoted" NEAR(x y) word'),
        ("star*", "star*"),
        ("-minus", "-minus"),
        ("^col:on", "^col:on"),
        ("AND", "AND"),
    ],
)
def test_fts_syntax_in_a_query_is_matched_as_text(syntax_index: SearchIndex, q: str, text: str) -> None:
    hits = syntax_index.search(q, "app", ["team"])
    assert len(hits) == 1 and text in hits[0].text


def test_query_and_limit_bounds(syntax_index: SearchIndex) -> None:
    assert syntax_index.search("a" * MAX_QUERY, None, ["team"]) == []
    with pytest.raises(QueryTooLong, match="characters"):
        syntax_index.search("a" * (MAX_QUERY + 1), None, ["team"])
    with pytest.raises(QueryTooLong, match="words"):
        syntax_index.search(" ".join(f"w{i}" for i in range(MAX_TERMS + 1)), None, ["team"])
    for bad in (0, -1, MAX_LIMIT + 1):
        with pytest.raises(BadLimit):
            syntax_index.search("plain", None, ["team"], bad)


def test_an_index_whose_making_failed_midway_is_made_again(
    data: Data, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A workspace's tables are made in the transaction that first indexes it: a failure
    leaves nothing of it behind, and the next refresh makes them."""
    written(data, "team", "app", "a record to find")
    from service.adapters.index import index as module

    monkeypatch.setattr(module, "TOKENIZER", "no_such_tokenizer")
    with SearchIndex(data) as index:
        with pytest.raises(sqlite3.OperationalError):
            index.refresh()
        assert index.table("team") is None and index.head("team") is None
        monkeypatch.undo()
        index.refresh()
        assert len(index.search("find", None, ["team"])) == 1


def test_a_new_event_written_into_an_earlier_segment_is_not_missed(data: Data) -> None:
    """New events are read from every segment holding a later id than the last indexed one
    (`segments.read_after`), wherever it sits: one appended to the first segment by hand is
    taken in as any new event is, without indexing the log again."""
    log = Log("app")
    for n in range(layout.SEGMENT_EVENTS + 1):
        log.entity(f"record {n}")
    hidden = log.entity("written into the first segment")
    root = data.path("team")
    append(root, "app", log.events[:-1])
    with SearchIndex(data) as index:
        index.refresh()
        first = root / layout.log_dir("app") / layout.segment_name(0)
        with first.open("ab") as handle:
            handle.write(canonical(log.events[-1]))
        done = index.refresh()
        assert (done.advanced, done.rebuilt) == (["team/app"], [])
        assert [h.id for h in index.search("first segment", None, ["team"])] == [hidden]
        assert len(index.entities("team", "app")) == layout.SEGMENT_EVENTS + 2
