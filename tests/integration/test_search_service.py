"""The service's search over a real data directory (real stores, git, SQLite FTS5): its
answers are `self search`'s (the application layer's `queries.search`, the call the CLI
makes) on the same records; the shared index follows each store's head commit."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from service.adapters.data.workspaces import Data
from service.adapters.index import query
from service.adapters.index.query import MAX_LIMIT
from service.adapters.index.shared import SharedIndex
from service.adapters.store import layout
from service.adapters.store.gitcommit import commit_files
from service.app import execute, queries
from service.app.workspace import Workspace
from service.core.commands.requests import Add, ProjectAdd
from service.core.events.events import Event, Origin, canonical
from service.core.fold.state import State
from service.server.api.errors import BadParameter
from service.server.api.search import SearchAnswer, StateOf, answer, asked
from tests.support.eventcheck import checked_tempdir
from tests.support.sizes import two_sizes
from tests.support.strategies import (
    EXPOSURES,
    LABELS,
    search_logs,
    search_queries,
)

HUMAN = Origin("human", True)
WORDS = ("alpha", "beta", "ab", "a", "NEAR", '"q"', "x*", "Ünï", "ß", "alphabet", "deploy")
KINDS = (*LABELS, "claim", "question")  # ledger records carry derived keys in their rows
SYNTAX = ('"', "*", "-", "NEAR", "(", ")", "OR", 'a"b')


def commit_logs(data: Data, workspace: str, events: dict[str, list[Event]]) -> None:
    """Write each log's events as the store lays them out (1,000 to a segment) and commit them
    all, as a write or a sync does: the store's head moves."""
    files: dict[str, bytes] = {}
    for log, logged in events.items():
        for start in range(0, len(logged), layout.SEGMENT_EVENTS):
            part = logged[start : start + layout.SEGMENT_EVENTS]
            name = f"{layout.log_dir(log)}/{layout.segment_name(start // layout.SEGMENT_EVENTS)}"
            files[name] = b"".join(canonical(e) for e in part)
    root = data.path(workspace)
    with data.open(workspace) as store, store.locked():
        for name, content in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(content)
        commit_files(store.repo, files, "test: logs")


def stored(data: Data) -> StateOf:
    """A log's state read from its store, as `self` reads it."""

    def state_of(workspace: str, log: str) -> State:
        with data.open(workspace) as store:
            return store.state(log)[0]

    return state_of


def encoded(rows: object) -> bytes:
    return msgspec.json.encode(rows)


def records(found: SearchAnswer) -> bytes:
    return encoded([hit.record for hit in found.hits])


def self_search(data: Data, q: str, project: str | None, all_: bool, exposure: str | None) -> list[object]:
    """The rows `self search --json` prints in workspace `team` with `project` selected."""
    with data.open("team") as store:
        return list(queries.search(Workspace(store, project, HUMAN), q, all_, exposure).rows)


def _search_property() -> Callable[..., None]:
    @pytest.mark.parametrize("walk", [query.WALK, 1])  # 1: short ids from every match's id
    @given(history=search_logs(WORDS, KINDS, 25), data=st.data())
    def test_the_service_answers_as_self_search_does(
        walk: int, history: dict[str, list[Event]], data: st.DataObject
    ) -> None:
        """The same rows in the same order: the model's bm25 and FTS5's, its statistics those of
        the same records, ties broken alike; short ids among every match, by either way."""
        with checked_tempdir() as tmp, pytest.MonkeyPatch.context() as patch:
            patch.setattr(query, "WALK", walk)
            team = Data(Path(tmp) / "data")
            team.add("team").close()
            commit_logs(team, "team", history)
            index = SharedIndex(team)
            payloads = [msgspec.json.decode(e.payload) for es in history.values() for e in es]
            texts = [str(payload.get("text", "")) for payload in payloads]
            try:
                for _ in range(6):
                    q = data.draw(search_queries([t for t in texts if t], SYNTAX), label="q")
                    project = data.draw(st.sampled_from(["app", "web", None]), label="project")
                    all_ = data.draw(st.booleans(), label="all")
                    exposure = data.draw(st.sampled_from([None, *EXPOSURES]), label="exposure")
                    limit = data.draw(st.sampled_from([1, 3, MAX_LIMIT]), label="limit")
                    if not q.split():
                        with pytest.raises(BadParameter, match="`q`: required"):
                            asked(q, project, limit, all_, exposure)
                        continue
                    found = answer(index, ["team"], asked(q, project, limit, all_, exposure), stored(team))
                    expected = self_search(team, q, project, all_, exposure)
                    assert records(found) == encoded(expected[:limit])
                    assert found.matched == len(expected)
                    assert [(h.workspace, h.rank) for h in found.hits] == [
                        ("team", n) for n in range(1, len(found.hits) + 1)
                    ]
            finally:
                index.close()

    return test_the_service_answers_as_self_search_does


_SIZES = two_sizes(
    _search_property, few=12, many=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_the_service_answers_as_self_search_does_in_few_examples = _SIZES[0]
test_the_service_answers_as_self_search_does = _SIZES[1]


def add(data: Data, workspace: str, project: str, *texts: str, preset: str = "idea") -> list[str]:
    """Records written through the application layer, as the CLI writes them; their ids."""
    made = []
    with data.open(workspace) as store:
        if project not in Workspace(store, None, HUMAN).state("").projects:
            execute(Workspace(store, None, HUMAN), ProjectAdd(slug=project, description=None))
        ws = Workspace(store, project, HUMAN)
        for text in texts:
            events = execute(ws, Add(text=text, preset=preset))
            made.append(str(msgspec.json.decode(events[-1].payload)["entity"]))
    return made


@pytest.fixture
def data(tmp_path: Path) -> Data:
    data = Data(tmp_path / "data")
    data.add("team").close()
    data.add("other").close()
    return data


@pytest.fixture
def shared(data: Data) -> Iterator[SharedIndex]:
    index = SharedIndex(data)
    yield index
    index.close()


def search(
    data: Data, index: SharedIndex, q: str, workspaces: list[str], project: str | None = None
) -> list[str]:
    found = answer(index, workspaces, asked(q, project, MAX_LIMIT, True, None), stored(data))
    return [str(hit.record["text"]) for hit in found.hits]


def test_a_write_by_any_path_is_found_by_the_next_search(data: Data, shared: SharedIndex) -> None:
    add(data, "team", "app", "deploy the index")
    assert search(data, shared, "deploy", ["team"]) == ["deploy the index"]
    add(data, "team", "app", "deploy again")  # not through the service: a CLI writing into DATA
    assert search(data, shared, "deploy", ["team"]) == ["deploy again", "deploy the index"]


def test_refresh_reads_no_log_while_the_head_stays(
    data: Data, shared: SharedIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    from service.adapters.store import Store

    add(data, "team", "app", "a record")
    assert shared.refresh("team").rebuilt == ["team/", "team/app"]
    folded: list[str] = []
    state = Store.state

    def counted(store: Store, log: str) -> object:
        folded.append(log)
        return state(store, log)

    monkeypatch.setattr(Store, "state", counted)
    nothing = shared.refresh("team")
    assert (nothing.advanced, nothing.rebuilt, nothing.dropped, folded) == ([], [], [], [])
    add(data, "team", "app", "one more")
    assert shared.refresh("team").advanced == ["team/app"]
    assert set(folded) >= {"", "app"}


def test_only_the_workspaces_asked_for_are_brought_up_or_searched(data: Data, shared: SharedIndex) -> None:
    add(data, "team", "app", "deploy here")
    add(data, "other", "app", "deploy there")
    assert search(data, shared, "deploy", ["team"]) == ["deploy here"]
    assert shared.index().head("other") is None  # never refreshed: no one searched it
    assert search(data, shared, "deploy", ["other"]) == ["deploy there"]


def test_the_named_project_comes_first_across_projects(data: Data, shared: SharedIndex) -> None:
    add(data, "team", "app", "ship the search")
    add(data, "team", "web", "ship the search")
    assert [r for r in search(data, shared, "ship", ["team"], "app")] == ["ship the search"] * 2
    found = answer(shared, ["team"], asked("ship", "app", 5, True, None), stored(data))
    assert [h.record["project"] for h in found.hits] == ["app", "web"]
    found = answer(shared, ["team"], asked("ship", "web", 5, True, None), stored(data))
    assert [h.record["project"] for h in found.hits] == ["web", "app"]


def test_short_ids_are_those_of_every_match_whatever_the_limit(data: Data, shared: SharedIndex) -> None:
    add(data, "team", "app", *(f"record {n}" for n in range(30)))
    whole = answer(shared, ["team"], asked("record", "app", MAX_LIMIT, True, None), stored(data))
    top = answer(shared, ["team"], asked("record", "app", 5, True, None), stored(data))
    assert (whole.matched, top.matched, len(top.hits)) == (30, 30, 5)
    assert [h.record for h in top.hits] == [h.record for h in whole.hits[:5]]


def test_an_index_removed_while_serving_is_made_again(data: Data, shared: SharedIndex) -> None:
    """A thread that opens the index after the file went finds no heads, and rebuilds."""
    add(data, "team", "app", "kept in the logs")
    assert search(data, shared, "kept", ["team"]) == ["kept in the logs"]
    for path in data.root.glob("index.sqlite*"):
        path.unlink()
    seen: list[list[str]] = []
    other = threading.Thread(target=lambda: seen.append(search(data, shared, "kept", ["team"])))
    other.start()
    other.join()
    assert seen == [["kept in the logs"]]


def test_searches_and_writes_from_many_threads_agree_with_the_logs(data: Data, shared: SharedIndex) -> None:
    add(data, "team", "app", "seed")
    failures: list[BaseException] = []

    def writer() -> None:
        add(data, "team", "app", *(f"written {n}" for n in range(8)))

    def reader() -> None:
        try:
            for _ in range(10):
                search(data, shared, "written", ["team"])
        except BaseException as exc:  # reported below, on the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=writer), *(threading.Thread(target=reader) for _ in range(4))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    assert sorted(search(data, shared, "written", ["team"])) == sorted(f"written {n}" for n in range(8))


def test_bad_parameters_name_themselves() -> None:
    cases = [
        (("", None, 20, False, None), "q"),
        (("   ", None, 20, False, None), "q"),
        ((" ".join(f"w{n}" for n in range(40)), None, 20, False, None), "q"),
        (("x" * 1001, None, 20, False, None), "q"),
        (("x", None, 0, False, None), "limit"),
        (("x", None, MAX_LIMIT + 1, False, None), "limit"),
        (("x", None, 10**9, False, None), "limit"),
        (("x", None, 20, False, "hidden"), "exposure"),
        (("x", "Not/A/Slug", 20, False, None), "project"),
    ]
    for args, field in cases:
        with pytest.raises(BadParameter) as caught:
            asked(*args)
        assert caught.value.field == field
        assert caught.value.document()["status"] == 400
    with pytest.raises(BadParameter, match=f"1 to {MAX_LIMIT}"):
        asked("x", None, 10**9, False, None)


def test_exposure_and_all_read_as_self_search_reads_its_flags() -> None:
    assert asked("x", None, 5, False, None).exposure == "search"
    assert asked("x", None, 5, True, None).exposure is None
    assert asked("x", None, 5, True, "full").exposure == "full"
    assert asked("x", None, 5, False, "index").exposure == "index"


def test_a_query_of_long_words_is_driven_by_its_fts_matches(data: Data, shared: SharedIndex) -> None:
    """FTS5 drives: its lists are sought within a range of keys (the named project's, an
    exposure's), and the records are read by key only for its matches — not a walk over every
    record of the workspace (a 1M-record index: 0.1 s even when nothing matches)."""
    add(data, "team", "app", "deploy the index")
    search(data, shared, "deploy", ["team"])
    table = shared.index().table("team")
    assert table is not None
    match = query._Match(table, ["deploy", "index"], "search")
    sql = match.sql("r.key", 1, f" ORDER BY {match.rank}, r.created DESC LIMIT 5")
    bounds = {"lo": 0, "hi": 1, "lo0": 0, "hi0": 1}
    rows = shared.index().db.execute(f"EXPLAIN QUERY PLAN {sql}", match.args | bounds)
    plan = " | ".join(str(row[-1]) for row in rows)
    assert "SCAN m VIRTUAL TABLE INDEX 0:M1><" in plan  # MATCH, rowid > and rowid <
    assert "SEARCH r USING INTEGER PRIMARY KEY (rowid=?)" in plan and "SCAN r" not in plan


def test_a_broad_query_ranks_only_the_named_projects_matches_when_they_fill_the_answer(
    data: Data, shared: SharedIndex
) -> None:
    """The named project comes first, so when it alone has `limit` matches nobody else's are
    ranked: its keys are one range per exposure. The others' only rank when it has fewer."""
    add(data, "team", "app", *(f"shared word {n}" for n in range(6)))
    add(data, "team", "web", *(f"shared word {n}" for n in range(6)))
    seen: list[tuple[int, list[query.Span]]] = []
    first = query._Match.first

    def counted(
        match: query._Match, db: object, span: query.Span, limit: int, skip: list[query.Span]
    ) -> list[query.Row]:
        seen.append((limit, skip))
        return first(match, db, span, limit, skip)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(query._Match, "first", counted)
        found = answer(shared, ["team"], asked("shared", "app", 4, False, None), stored(data))
        assert [h.record["project"] for h in found.hits] == ["app"] * 4 and found.matched == 12
        assert seen == [(4, [])]  # the project's range alone
        seen.clear()
        found = answer(shared, ["team"], asked("shared", "app", 8, False, None), stored(data))
        assert [h.record["project"] for h in found.hits] == ["app"] * 6 + ["web"] * 2
        assert len(seen) == 2 and seen[1][0] == 2 and len(seen[1][1]) == 1  # then the others
