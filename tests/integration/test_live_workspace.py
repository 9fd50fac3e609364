"""A live workspace on a real store: answers kept per state version are bounded, and a state
move drops them."""

from __future__ import annotations

from pathlib import Path

from service.api.routes import KEPT_ANSWERS, remembered
from service.data.workspaces import Data
from service.live.hub import Hub
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
