"""Ids stay unique per writer whatever the clocks do, and ids too far ahead are recognised."""

from __future__ import annotations

import secrets

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.core.errors import Invalid
from service.core.events import ids
from tests.support.strategies import MAX_RANDOM, START_MS

PROPERTY = settings(max_examples=300, deadline=None)
STEP_MASK = (1 << ids.STEP_BITS) - 1
TIMES = st.integers(START_MS, (1 << 48) - 1)
LAST = st.tuples(TIMES, st.integers(0, MAX_RANDOM)).map(lambda p: ids.encode((p[0] << 80) | p[1]))


@PROPERTY
@given(last=LAST, behind=st.integers(0, 10**9), r1=st.integers(0, MAX_RANDOM), r2=st.integers(0, MAX_RANDOM))
def test_two_writers_behind_the_same_last_id_mint_different_ids(
    last: str, behind: int, r1: int, r2: int
) -> None:
    """Both clocks are behind the greatest id they saw: each draws its own step from it."""
    now = max(0, ids.time_ms(last) - behind)
    first, second = ids.next_id(last, now, r1), ids.next_id(last, now, r2)
    assert first > last and second > last
    if r1 & STEP_MASK != r2 & STEP_MASK:
        assert first != second


@PROPERTY
@given(last=LAST, randoms=st.lists(st.integers(0, MAX_RANDOM), min_size=1, max_size=50))
def test_behind_the_clock_an_id_keeps_the_last_time_part_until_the_random_part_runs_out(
    last: str, randoms: list[int]
) -> None:
    previous = last
    for random80 in randoms:
        new = ids.next_id(previous, 0, random80)
        step = ids.decode(new) - ids.decode(previous)
        assert new > previous
        if ids.time_ms(new) == ids.time_ms(previous):
            assert 1 <= step <= 1 << ids.STEP_BITS  # a bounded step of the random part
        else:  # the random part overflowed: the next millisecond
            assert ids.time_ms(new) == ids.time_ms(previous) + 1
        previous = new


def test_writers_behind_the_greatest_id_there_is_still_diverge() -> None:
    top = "7zzzzzzzzzzzzzzzzzzzzzzzzz"
    first, second = ids.next_id(top, 0, 1), ids.next_id(top, 0, 2)
    assert first != second and first > top and second > top


def test_thousands_of_ids_from_two_writers_behind_one_id_never_meet() -> None:
    last = ids.encode((START_MS << 80) | (1 << 79))
    minted: list[set[str]] = []
    for _ in range(2):
        mine, previous = set(), last
        for _ in range(3000):
            previous = ids.next_id(previous, START_MS - 5000, secrets.randbits(80))
            mine.add(previous)
        minted.append(mine)
    assert not minted[0] & minted[1]


def test_the_last_id_there_is_exhausts_the_space() -> None:
    with pytest.raises(Invalid, match="exhausted"):
        ids.next_id(ids.encode(ids.MAX_ID_VALUE), 0, 0)


def test_an_id_more_than_the_horizon_ahead_is_beyond_it() -> None:
    now = START_MS
    assert ids.HORIZON_MS == 24 * 3600 * 1000
    assert not ids.beyond_horizon(ids.encode(now << 80), now)
    assert not ids.beyond_horizon(ids.encode((now + ids.HORIZON_MS) << 80 | MAX_RANDOM), now)
    assert ids.beyond_horizon(ids.encode((now + ids.HORIZON_MS + 1) << 80), now)
    assert ids.beyond_horizon("7zzzzzzzzzzzzzzzzzzzzzzzzz", now)
    assert not ids.beyond_horizon(ids.encode(1 << 80), now)  # the past is never beyond it
