"""A sync run on a live workspace (`service/mirror/round.py`) against a real bare remote: the
states it leaves equal a refold of the store from nothing, whether the fetch only appended
(folded in memory) or put fetched events before local ones (folded again through the cache),
and the stream gets exactly the events the sync brought, each once."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from service.live.space import LiveWorkspace, Quiet
from service.mirror.round import sync_live
from service.sync import sync
from tests.integration.sync_support import FAST, append, close_all, pair


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    yield
    close_all()


def states(live: LiveWorkspace) -> dict[str, bytes]:
    return {log: msgspec.json.encode(live.state(log)[0], order="sorted") for log in live.store.logs()}


def refolded(live: LiveWorkspace) -> dict[str, bytes]:
    return {log: msgspec.json.encode(live.store.refold(log)[0], order="sorted") for log in live.store.logs()}


@pytest.mark.parametrize("seed", range(4))
def test_the_states_after_a_sync_are_a_refold(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    _, a, b = pair(tmp_path)
    live = LiveWorkspace("b", b, Quiet())
    try:
        streamed: list[str] = []
        for step in range(6):
            pushed = append(a, rng.randint(1, 30), text=f"from a {step}") if rng.random() < 0.8 else []
            sync(a, options=FAST)
            local = []
            if rng.random() < 0.5:  # b wrote too (as the service's writer would have): a rebase
                local = append(b, rng.randint(1, 5), text=f"from b {step}")
                live.load()
            mark = live.feed.end()
            with b.locked():
                summary = sync_live(live, FAST)
            found = live.feed.since(mark)
            assert found is not None
            got = [e.id for e in found[0]]
            assert sorted(got) == sorted(e.id for e in pushed), "the stream gets what the sync brought"
            assert summary.pushed == len(local)
            streamed += got
            assert live.head == b.head()
            assert states(live) == refolded(live), f"step {step}"
        assert len(streamed) == len(set(streamed)), "each event streamed once"
    finally:
        live.close()
