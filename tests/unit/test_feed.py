"""The live feed: marks, what is kept, and waking async readers from another thread."""

from __future__ import annotations

import asyncio
import threading

import msgspec

from service.core.events.events import Event, Origin
from service.server.live.feed import Feed


def event(n: int) -> Event:
    return Event(f"{n:026d}", "t", "entity.confirmed", Origin("human", True), "p", msgspec.Raw(b"{}"))


def test_since_a_mark_and_after_an_id() -> None:
    feed = Feed(keep=3)
    start = feed.end()
    feed.publish([event(1), event(2)])
    got = feed.since(start)
    assert got is not None and [e.id for e in got[0]] == [event(1).id, event(2).id] and got[1] == 2
    assert feed.mark_of(event(1).id) == 1 and feed.get(event(2).id) == event(2)
    feed.publish([event(3), event(4)])
    assert feed.since(start) is None, "a mark older than what is kept: read the logs"
    assert feed.mark_of(event(1).id) is None and feed.get(event(1).id) is None
    kept = feed.since(feed.mark_of(event(2).id) or 0)
    assert kept is not None and [e.id for e in kept[0]] == [event(3).id, event(4).id]


def test_a_publish_from_another_thread_wakes_a_waiting_reader() -> None:
    async def main() -> float:
        feed = Feed()
        with feed.waiting() as waiter:
            loop = asyncio.get_running_loop()
            threading.Timer(0.05, feed.publish, [[event(1)]]).start()
            start = loop.time()
            await waiter.wait(5.0)
            return loop.time() - start

    assert asyncio.run(main()) < 2.0


def test_close_wakes_every_reader() -> None:
    async def main() -> bool:
        feed = Feed()
        with feed.waiting() as waiter:
            threading.Timer(0.05, feed.close).start()
            await waiter.wait(5.0)
            return feed.closed

    assert asyncio.run(main())
