"""The web view's documents on a live workspace: the records table comes in pages and the
project page's lists are cut, both made only of the rows they show, and each row is the one
`GET …/state` answers for that record (same short id, same keys); a record page names the
records that cite it as the rows of every record would."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator

import msgspec
import pytest

from service.adapters.data.workspaces import Data
from service.app import post
from service.core.commands.commands import project_add
from service.core.events import posted
from service.core.events.events import Origin
from service.server.api import reads
from service.server.live.hub import Hub
from service.server.live.space import LiveWorkspace
from service.server.live.view import View, reading
from service.server.web import pages

ANN = Origin("human", True, None, "ann")
IDEAS, CONVENTIONS = 230, 30


def _post(live: LiveWorkspace, events: list[dict[str, object]]) -> list[str]:
    body = posted.decode(msgspec.json.encode({"events": events}))

    async def write() -> list[str]:
        job = await live.writer.submit_async(lambda batch: post(View(live, None, ANN, batch), body), 10.0)
        assert job.error is None, job.error
        return [e.id for e in job.events]

    return asyncio.run(write())


def _note(text: str, label: str) -> dict[str, object]:
    return {"type": "entity.confirmed", "project": "app", "payload": {"text": text, "labels": [label]}}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveWorkspace]:
    data = Data(tmp_path_factory.mktemp("web") / "data")
    data.add("acme").close()
    hub = Hub(data)
    try:
        workspace = hub.workspace("acme")

        async def add_project() -> None:
            job = await workspace.writer.submit_async(
                lambda batch: View(workspace, None, ANN, batch).write(
                    "", lambda s, c, k: project_add(s, k, "app", None)
                ),
                10.0,
            )
            assert job.error is None

        asyncio.run(add_project())
        ideas = _post(workspace, [_note(f"idea number {n}", "idea") for n in range(IDEAS)])
        _post(workspace, [_note(f"convention number {n}", "convention") for n in range(CONVENTIONS)])
        links = [
            {
                "type": "entity.linked",
                "project": "app",
                "payload": {"entity": i, "link": {"type": "relates", "target": ideas[0]}},
            }
            for i in ideas[1:4]
        ]
        _post(workspace, links)
        yield workspace
    finally:
        hub.close()


def _every_row(live: LiveWorkspace, all_: bool = False) -> list[dict[str, object]]:
    with reading(live, "app", ANN) as view:
        return reads.rows(view, all_)


@pytest.mark.parametrize(
    "chosen", [pages.Filter(), pages.Filter(label="convention"), pages.Filter(text="NUMBER 1")]
)
def test_the_pages_of_the_table_are_the_rows_the_filter_keeps(
    live: LiveWorkspace, chosen: pages.Filter
) -> None:
    with reading(live, "app", ANN) as view:
        every = [r for r in _every_row(live) if _keeps(chosen, r)]
        first = pages.table(view, chosen)
        tables = [first] + [
            pages.table(view, msgspec.structs.replace(chosen, page=n)) for n in range(2, first.pages + 1)
        ]
    assert first.matched == len(every) and first.pages == max(1, -(-len(every) // pages.PAGE_ROWS))
    assert [r for t in tables for r in t.rows] == every, "page after page, the API's rows"
    assert all(len(t.rows) == pages.PAGE_ROWS for t in tables[:-1])
    assert [t.first for t in tables] == [1 + n * pages.PAGE_ROWS for n in range(len(tables))]
    assert first.previous is None and tables[-1].next is None
    for before, after in itertools.pairwise(tables):
        assert before.next == chosen.query(after.page) and after.previous == chosen.query(before.page)


def _keeps(chosen: pages.Filter, row: dict[str, object]) -> bool:
    labels = row["labels"]
    assert isinstance(labels, list)
    seen = " ".join(str(row[k] or "") for k in ("id", "text", "why")).casefold()
    return (not chosen.label or chosen.label in labels) and all(
        w in seen for w in chosen.text.casefold().split()
    )


def test_a_page_out_of_range_is_the_nearest_page(live: LiveWorkspace) -> None:
    with reading(live, "app", ANN) as view:
        last = pages.table(view, pages.Filter(page=10_000))
        first = pages.table(view, pages.Filter(page=-3))
    assert last.page == last.pages == 3 and len(last.rows) == IDEAS + CONVENTIONS - 2 * pages.PAGE_ROWS
    assert first.page == 1 and first.previous is None
    assert pages.Filter(label="idea", all=True).query(2) == "label=idea&all=1&page=2"


def test_the_project_page_cuts_each_list_and_counts_it(live: LiveWorkspace) -> None:
    with reading(live, "app", ANN) as view:
        page = pages.project(view)
    every = _every_row(live)
    groups = {g.key: g for g in page.groups}
    conventions = [r for r in every if "convention" in r["labels"]]  # type: ignore[operator]
    assert groups["conventions"].total == CONVENTIONS
    assert groups["conventions"].rows == conventions[: pages.GROUP_ROWS]
    assert groups["goals"].total == 0 and groups["goals"].rows == []


def test_a_record_page_names_the_records_citing_it(live: LiveWorkspace) -> None:
    every = {str(r["id"]): r for r in _every_row(live, True)}
    cited = next(i for i, r in every.items() if r["text"] == "idea number 0")
    with reading(live, "app", ANN) as view:
        page = pages.record(view, cited)
    citing = [i for i, r in every.items() if any(link["target"] == cited for link in r["links"])]  # type: ignore[attr-defined]
    assert sorted(page.cited_by) == sorted(citing) and len(citing) == 3
    assert {i: page.named[i] for i in citing} == {i: every[i] for i in citing}
