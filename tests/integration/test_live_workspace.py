"""A live workspace on a real store: answers kept per state version are bounded, and a state
move drops them."""

from __future__ import annotations

from pathlib import Path

from service.api.routes import KEPT_ANSWERS, remembered
from service.data.workspaces import Data
from service.live.hub import Hub
from service.live.view import View
from service.model.events import Origin

ANN = Origin("human", True, None, "ann")


def test_kept_answers_are_bounded_and_dropped_when_the_state_moves(tmp_path: Path) -> None:
    data = Data(tmp_path / "data")
    data.add("acme").close()
    hub = Hub(data)
    try:
        live = hub.workspace("acme")
        with live.reading(None, ANN) as view:
            for budget in range(3 * KEPT_ANSWERS):
                assert (
                    remembered(view, ("context", budget), lambda b=budget: str(b).encode())
                    == str(budget).encode()
                )
            assert len(live.rendered) == KEPT_ANSWERS, "never more than the cap"
            assert ("context", 3 * KEPT_ANSWERS - 1) in live.rendered, "the newest are kept"
        live.load()
        assert live.rendered == {}
    finally:
        hub.close()


def test_the_writer_leaves_the_clock_at_the_last_id_it_committed(tmp_path: Path) -> None:
    """A batch issues its ids in memory; its commit moves `.local/clock` past them (written
    in place, not through a new file), so a CLI writing next issues later ids."""
    import asyncio

    from service.live.posting import post
    from service.model import posted
    from service.model.commands import project_add

    data = Data(tmp_path / "data")
    data.add("acme").close()
    hub = Hub(data)
    try:
        live = hub.workspace("acme")
        body = b'{"events":[{"type":"entity.confirmed","project":"app","payload":{"text":"a note"}}]}'

        async def write() -> list[str]:
            made = await live.writer.submit_async(
                lambda batch: View(live, None, ANN, batch).write(
                    "", lambda s, c, k: project_add(s, k, "app", None)
                ),
                5.0,
            )
            assert made.error is None
            ids: list[str] = []
            for _ in range(3):
                job = await live.writer.submit_async(
                    lambda batch: post(live, posted.decode(body), ANN, batch), 5.0
                )
                ids += [e.id for e in job.events]
            return ids

        ids = asyncio.run(write())
        clock = data.path("acme") / ".local" / "clock"
        assert len(ids) == 3 and clock.read_bytes() == max(ids).encode() + b"\n"
    finally:
        hub.close()
