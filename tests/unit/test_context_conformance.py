"""Our projections of the real Superself sample store show, hide, wait and date the same
records as the previous system's printed output (expected/*.txt); bytes may differ."""

from __future__ import annotations

import re

import pytest

from service.core.commands.config import WorkspaceConfig
from service.core.events.events import decode_line
from service.core.fold.fold import fold_all
from service.core.fold.state import State
from service.core.projections.context import ContextDoc, build_context, render_agent
from service.core.projections.search import search
from service.core.projections.status import build_status, render_status
from service.core.projections.views import list_rows, work_list, work_list_text
from tests.support.samples import SUPERSELF_SAMPLE as SAMPLE

TODAY = "2026-12-01"


@pytest.fixture(scope="module")
def state() -> State:
    lines = (SAMPLE / "store" / "projects" / "app" / "log.jsonl").read_bytes().splitlines()
    return fold_all(decode_line(line) for line in lines if line.strip())


@pytest.fixture(scope="module")
def doc(state: State) -> ContextDoc:
    return build_context("app", state, [], WorkspaceConfig(), TODAY, {}, 0, "a sample app")


def expected(name: str) -> str:
    return (SAMPLE / "expected" / name).read_text()


def block(text: str, title: str | None) -> list[str]:
    """Row lines of a section (`None`: the full block before the first `##`)."""
    if title is None:
        head = text.split("\n## ", 1)[0]
        return [line for line in head.splitlines() if line.startswith("- ")]
    match = re.search(rf"^## {title}\n\n(.*?)(?:\n\n|\Z)", text, re.S | re.M)
    return match.group(1).splitlines() if match else []


def test_full_rows_match_the_previous_render(doc: ContextDoc) -> None:
    ours = render_agent(doc)
    assert (
        block(ours, None)
        == block(expected("context.txt"), None)
        == [
            "- [goal] teams share one typed project state",
            "- [objective] ship the sync beta (target 2099-03-31)",
            "- [convention] tabs",
            "- [convention] events are never edited",
        ]
    )


def test_index_rows_and_search_count_match(doc: ContextDoc) -> None:
    ours = block(render_agent(doc), "Index")
    theirs = block(expected("context.txt"), "Index")
    assert (
        ours[:-1]
        == theirs[:-1]
        == [
            "- [milestone] two clones converge",
            "- [decision] merge with union — simple",
            "- [decision] store events as JSONL in git — diffable and mergeable",
            "- [note] raw note kept at index",
        ]
    )
    assert ours[-1].startswith("- 2 entities at search exposure; run `")
    assert theirs[-1].startswith("- 2 entities at search exposure; run `")


def test_waiting_proposal_deadline_and_open_work_match(doc: ContextDoc) -> None:
    ours = render_agent(doc)
    waiting = block(ours, "Waiting on you")
    assert len(waiting) == 1 == len(block(expected("context.txt"), "Waiting on you"))
    assert "add a cache" in waiting[0]
    assert "`self decide confirm 01m8ny77a`" in waiting[0]
    assert block(ours, "Deadlines") == ["- 2099-03-31: [objective] ship the sync beta"]
    assert block(ours, "Deadlines") == block(expected("context.txt"), "Deadlines")
    progress = block(ours, "Work in progress")
    assert progress == ["- 1 more open work item; run `self work list --project app`"]
    assert "## Health" not in ours
    assert doc.counts["search"] == 2 and doc.counts["open_work"] == 1


def test_hidden_records_stay_hidden(doc: ContextDoc) -> None:
    ours = render_agent(doc)
    for hidden in ("a web view of state", "searchable detail", "write the docs", "write the merge"):
        assert hidden not in ours


def _numbers(line: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", line)]


def test_status_counts_equal_the_previous_status(state: State) -> None:
    theirs = {line.split(":", 1)[0]: line for line in expected("status.txt").splitlines()}
    status = build_status("app", state, {}, [], TODAY)
    w = status.work
    assert [w.active, w.blocked, w.next, w.done] == _numbers(theirs["work"]) == [0, 1, 0, 1]
    progress = [
        status.objectives_open,
        status.milestones_reached,
        status.milestones_total,
        status.criteria_covered,
        status.criteria_total,
    ]
    assert progress == _numbers(theirs["objectives"]) == [1, 0, 1, 1, 2]
    assert [status.waiting] == _numbers(theirs["waiting on you"]) == [1]
    assert status.goal == "teams share one typed project state"
    ours = render_status(status)
    for key in ("app — goal", "work", "objectives", "waiting on you", "health", "process w-s7h2x"):
        assert theirs[key] in ours.splitlines(), key


def test_state_list_order_matches(state: State) -> None:
    theirs = [line.split("  ")[0] for line in expected("state-list.txt").splitlines()[:-1]]
    assert [e.id for e in list_rows(state, False)] == theirs
    assert expected("state-list.txt").splitlines()[-1] == f"{len(theirs)} live entities"


def test_work_list_matches(state: State) -> None:
    ours = work_list_text(work_list(state)).splitlines()
    theirs = expected("work-list.txt").splitlines()
    assert ours[0] == theirs[0] == "w-s7h2x  blocked (on dependency)  write the docs"
    assert ours[-1] == theirs[-1] == "1 open work unit"


def test_search_finds_what_context_leaves_out(state: State) -> None:
    pool = [(e, True) for e in state.entities.values()]
    assert [e.text for e in search("web", pool, False, None)] == ["a web view of state"]
    assert search("cache", pool, False, None) == []  # at index exposure: context shows it
    assert [e.text for e in search("cache", pool, True, None)] == ["add a cache"]
