"""What the instances say on the channel and the lock they share: an announcement goes through
the channel's text as it was; anything else on the channel is no announcement; the lock's key
is the same on every instance and release (a changed key would let two releases lead at once
during a rolling deploy)."""

from __future__ import annotations

import pytest

from service.adapters.cluster.payload import MAX_PAYLOAD, Announcement, decode, encode, lock_key

KEY = 18616571943716957  # sha256("selfhub:background")'s first 8 bytes, signed


@pytest.mark.parametrize(
    "announcement",
    [Announcement("acme", "a" * 40, "0123456789ab"), Announcement(None, None, "0123456789ab")],
)
def test_an_announcement_goes_through_the_channel_as_it_was(announcement: Announcement) -> None:
    text = encode(announcement)
    assert decode(text) == announcement
    assert len(text.encode()) < MAX_PAYLOAD


@pytest.mark.parametrize("payload", ["", "hello", "[]", '{"workspace": "acme"}', '{"instance": 3}'])
def test_anything_else_on_the_channel_is_no_announcement(payload: str) -> None:
    assert decode(payload) is None


def test_the_lock_key_is_fixed_and_named_by_the_work() -> None:
    assert lock_key("background") == KEY
    assert lock_key("other work") != KEY
    assert -(2**63) <= KEY < 2**63  # a PostgreSQL bigint
