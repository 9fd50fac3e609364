"""The per-token rate limit: a token bucket per API token id, and one per client address for
requests without a valid token. The guard charges it where it learns who is calling
(`guard.grant`), so only the routes that check a token are limited: /healthz, /readyz and
/metrics never are.

A bucket holds up to `burst` requests and refills at `rate` a second; a request finding it
empty is answered 429 with the seconds until one is back (`Retry-After`).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from service.server.api.errors import ApiError

MAX_BUCKETS = 10_000  # past it, the buckets that have refilled are dropped (they hold nothing)


class RateLimited(ApiError):
    code = "rate-limited"

    def __init__(self, retry_after: float) -> None:
        self.retry_after = max(1, math.ceil(retry_after))
        super().__init__(f"this caller's request rate is over the limit; retry in {self.retry_after} s")

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


class Bucket:
    """`burst` requests at once, refilled at `rate` a second (times in seconds, given)."""

    __slots__ = ("burst", "level", "rate", "stamp")

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate, self.burst = rate, burst
        self.level, self.stamp = float(burst), now

    def take(self, now: float) -> float:
        """0 when a request may go now (and one is taken), else the seconds until one may."""
        self.level = min(float(self.burst), self.level + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.level >= 1.0:
            self.level -= 1.0
            return 0.0
        return (1.0 - self.level) / self.rate

    def full(self, now: float) -> bool:
        return self.level + (now - self.stamp) * self.rate >= self.burst


class Limiter:
    """The buckets of one service, by key (`token:ID` or `addr:HOST`); thread-safe, since
    the guard runs in worker threads. A rate of 0 turns the limit off."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self.buckets: dict[str, Bucket] = {}
        self.lock = threading.Lock()

    def charge(self, key: str) -> None:
        """Take one request from `key`'s bucket; RateLimited when it is empty."""
        if self.rate <= 0:
            return
        with self.lock:
            now = self.clock()
            bucket = self.buckets.get(key)
            if bucket is None:
                if len(self.buckets) >= MAX_BUCKETS:
                    self._forget(now)
                bucket = self.buckets[key] = Bucket(self.rate, self.burst, now)
            wait = bucket.take(now)
        if wait > 0:
            raise RateLimited(wait)

    def _forget(self, now: float) -> None:
        for key in [k for k, b in self.buckets.items() if b.full(now)]:
            del self.buckets[key]
        if len(self.buckets) >= MAX_BUCKETS:  # all busy: the oldest half start afresh
            for key in list(self.buckets)[: MAX_BUCKETS // 2]:
                del self.buckets[key]
