"""The change feed's cursor follows arrival: events written offline (ids older than what a
reader has seen) and events of two replicas, brought in any order into a live workspace, are
each returned once to a reader following page by page from any cursor, whatever their ids."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.core.events import ids
from service.server.live.feed import arrived
from service.server.live.outside import catch_up
from service.server.live.space import LiveWorkspace
from tests.support import gitclient as gc
from tests.support.live import live_workspace

SLUG = "web"
BASE_MS = 1_700_000_000_000


def replica_ids(replica: int, n: int) -> list[str]:
    """`n` increasing ids of one replica's clock (two replicas' interleave in time)."""
    return [ids.encode(((BASE_MS + 7 * k + replica) << ids.RANDOM_BITS) | replica) for k in range(n)]


def bring(live: LiveWorkspace, batch: list[str]) -> None:
    """`batch` committed into the store from outside the service (a sync or a push), folded."""
    lines = [gc.event(SLUG, f"note {i}", i)[1] for i in batch]
    live.store.write_lines({SLUG: lines}, [])
    catch_up(live)


def follow(live: LiveWorkspace, mark: int, limit: int) -> tuple[list[str], int]:
    """Every page after arrival number `mark`, `limit` at a time: the ids, the last number."""
    seen: list[str] = []
    while True:
        page = arrived(live.feed, live.store.root, SLUG, mark, limit)
        seen += [e.id for _, e in page]
        if not page:
            return seen, mark
        mark = page[-1][0]


@st.composite
def arrivals(draw: st.DrawFn) -> tuple[list[list[str]], list[int], int]:
    """Batches of two replicas' ids in an arrival order that keeps neither id order nor
    replica order (offline writes come late), the points a reader starts at, a page size."""
    one, two = draw(st.integers(1, 12)), draw(st.integers(0, 12))
    every = replica_ids(0, one) + replica_ids(1, two)
    order = draw(st.permutations(every))
    cuts = sorted(draw(st.lists(st.integers(0, len(order)), max_size=5)))
    batches = [order[a:b] for a, b in zip([0, *cuts], [*cuts, len(order)], strict=True) if order[a:b]]
    starts = draw(st.lists(st.integers(0, len(batches)), min_size=1, max_size=3))
    return batches, starts, draw(st.integers(1, 4))


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(arrivals())
def test_following_from_any_cursor_returns_every_later_arrival_once(
    case: tuple[list[list[str]], list[int], int],
) -> None:
    batches, starts, limit = case
    with tempfile.TemporaryDirectory() as folder, live_workspace(Path(folder)) as live:
        gc_project(live)
        marks: dict[int, int] = {0: live.feed.end()}
        readers: dict[int, tuple[list[str], int]] = {}
        for n, batch in enumerate(batches, 1):
            bring(live, batch)
            marks[n] = live.feed.end()
            for start in starts:  # a reader that started at `start` keeps following
                if start < n:
                    seen, mark = readers.get(start, ([], marks[start]))
                    more, mark = follow(live, mark, limit)
                    readers[start] = (seen + more, mark)
        for start in starts:
            seen, mark = readers.get(start, ([], marks.get(start, live.feed.end())))
            more, _ = follow(live, mark, limit)
            expected = [i for batch in batches[start:] for i in batch]
            assert sorted(seen + more) == sorted(expected), "each event after the cursor, once"
            assert len(seen + more) == len(set(seen + more))


def gc_project(live: LiveWorkspace) -> None:
    """Project `web`'s log, made by a first event older than every id the cases bring."""
    bring(live, [ids.encode((BASE_MS - 1000) << ids.RANDOM_BITS)])


def test_a_reopened_workspace_numbers_what_was_written_while_it_was_closed(tmp_path: Path) -> None:
    from service.adapters.data.workspaces import Data
    from service.adapters.store import Store
    from service.server.live.hub import Hub

    first, later = replica_ids(0, 3), replica_ids(1, 2)
    with live_workspace(tmp_path) as live:
        bring(live, first[1:])
        end = live.feed.end()
        epoch = live.feed.epoch
    with Store.open(tmp_path / "data" / "workspaces" / "acme") as store:  # the service is stopped
        store.write_lines({SLUG: [gc.event(SLUG, "offline", i)[1] for i in [first[0], *later]]}, [])
    hub = Hub(Data(tmp_path / "data"))
    try:
        again = hub.workspace("acme")
        assert again.feed.epoch == epoch
        seen, _ = follow(again, end, 2)
        assert sorted(seen) == sorted([first[0], *later])
    finally:
        hub.close()
