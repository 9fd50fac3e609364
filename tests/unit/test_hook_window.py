"""The webhook replay window: a signed body is refused again within the window, taken again
after it, per workspace, and never more than `keep` bodies are held."""

from __future__ import annotations

from service.server.api.hooks import Deliveries


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_body_is_a_replay_within_the_window_only() -> None:
    clock = Clock()
    seen = Deliveries(keep=100, window=600.0, clock=clock)
    assert seen.unsigned_before("acme", b"{}")
    clock.now = 599.0
    assert not seen.unsigned_before("acme", b"{}")
    assert seen.unsigned_before("other", b"{}"), "per workspace"
    clock.now = 601.0
    assert seen.unsigned_before("acme", b"{}"), "the window is over"


def test_the_window_holds_at_most_keep_bodies() -> None:
    seen = Deliveries(keep=10, window=600.0, clock=Clock())
    for n in range(1000):
        assert seen.unsigned_before("acme", str(n).encode())
    assert len(seen._signed) <= 10
    assert not seen.unsigned_before("acme", b"999")
