"""The per-token rate limit: a token bucket per key, on a clock the test moves."""

from __future__ import annotations

import pytest

from service.server.api import limits
from service.server.api.limits import Bucket, Limiter, RateLimited


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_lets_the_burst_through_then_says_how_long_to_wait() -> None:
    bucket = Bucket(rate=2.0, burst=3, now=0.0)
    assert [bucket.take(0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take(0.0) == pytest.approx(0.5)  # one request back after 1/rate s
    assert bucket.take(0.25) == pytest.approx(0.25)
    assert bucket.take(0.5) == 0.0


def test_a_bucket_refills_at_its_rate_up_to_the_burst() -> None:
    bucket = Bucket(rate=1.0, burst=2, now=0.0)
    bucket.take(0.0), bucket.take(0.0)
    assert not bucket.full(1.0) and bucket.full(2.0)
    later = [bucket.take(100.0) for _ in range(3)]
    assert later[:2] == [0.0, 0.0] and later[2] > 0, "an idle hour still allows only the burst"


def test_the_limiter_keeps_one_bucket_per_key() -> None:
    clock = Clock()
    limiter = Limiter(rate=1.0, burst=2, clock=clock)
    limiter.charge("token:a")
    limiter.charge("token:a")
    with pytest.raises(RateLimited) as caught:
        limiter.charge("token:a")
    assert caught.value.status == 429 and caught.value.code == "rate-limited"
    assert caught.value.headers() == {"Retry-After": "1"}
    limiter.charge("token:b")  # another token has its own bucket
    limiter.charge("addr:127.0.0.1")
    clock.now += 1.0
    limiter.charge("token:a")


def test_retry_after_is_whole_seconds_rounded_up() -> None:
    clock = Clock()
    limiter = Limiter(rate=0.25, burst=1, clock=clock)
    limiter.charge("k")
    with pytest.raises(RateLimited) as caught:
        limiter.charge("k")
    assert caught.value.retry_after == 4 and "retry in 4 s" in caught.value.detail
    clock.now += 3.5
    with pytest.raises(RateLimited) as again:
        limiter.charge("k")
    assert again.value.retry_after == 1


def test_a_rate_of_zero_is_no_limit() -> None:
    limiter = Limiter(rate=0.0, burst=1, clock=Clock())
    for _ in range(1000):
        limiter.charge("k")
    assert limiter.buckets == {}


def test_buckets_that_refilled_are_forgotten_when_there_are_too_many(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_BUCKETS", 4)
    clock = Clock()
    limiter = Limiter(rate=1.0, burst=1, clock=clock)
    for key in "abc":
        limiter.charge(key)
    clock.now += 5.0  # a, b and c are full again
    limiter.charge("d")
    limiter.charge("e")  # the fifth key: the full ones go, d (empty) stays
    assert set(limiter.buckets) == {"d", "e"}
    with pytest.raises(RateLimited):
        limiter.charge("d")


def test_when_every_bucket_is_busy_the_oldest_half_start_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_BUCKETS", 4)
    limiter = Limiter(rate=1.0, burst=1, clock=Clock())
    for key in "abcde":
        limiter.charge(key)
    assert list(limiter.buckets) == ["c", "d", "e"]
