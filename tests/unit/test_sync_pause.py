"""The pause before a sync's next attempt after a rejected push (`engine._pause`): the first
`at_once` retries go at once, then jittered pauses from `pause`, doubling up to `max_pause`."""

from __future__ import annotations

import random

from service.adapters.sync.engine import Options, _pause


def test_the_first_retries_go_at_once_then_the_pauses_double_up_to_the_most() -> None:
    opts = Options(pause=0.002, max_pause=0.006, at_once=2, rng=random.Random(7))
    paused = [_pause(opts, attempt) for attempt in range(1, 7)]
    assert paused[:2] == [0.0, 0.0]
    caps = [0.002, 0.004, 0.006, 0.006]  # attempts 3 to 6
    assert all(cap / 2 <= p <= cap for p, cap in zip(paused[2:], caps, strict=True)), paused


def test_without_at_once_every_retry_pauses_as_before() -> None:
    opts = Options(pause=0.002, max_pause=0.004, rng=random.Random(7))
    assert 0.001 <= _pause(opts, 1) <= 0.002
