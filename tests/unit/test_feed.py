"""The live feed: marks, what is kept, and waking async readers from another thread."""

from __future__ import annotations

import asyncio
import threading

import msgspec

from service.core.events.events import Event, Origin
from service.server.live.feed import RENDERED, Feed, cursor_form


def event(n: int) -> Event:
    return Event(f"{n:026d}", "t", "entity.confirmed", Origin("human", True), "p", msgspec.Raw(b"{}"))


def test_since_a_mark_and_after_an_id() -> None:
    feed = Feed(keep=2)
    start = feed.end()
    feed.publish([event(1), event(2)])
    got = feed.since(start)
    assert got == [(1, event(1)), (2, event(2))]
    assert feed.mark_of(event(1).id) == 1 and feed.get(event(2).id) == event(2)
    assert feed.since(start, most=1) == [(1, event(1))], "a wake hands at most `most`"
    feed.publish([event(3), event(4)])
    assert feed.since(start) is None, "a mark older than what is kept: read the journal"
    assert feed.mark_of(event(1).id) is None and feed.get(event(1).id) is None
    assert feed.since(2) == [(3, event(3)), (4, event(4))]


def test_an_event_is_rendered_once_for_all_its_readers_and_few_are_kept() -> None:
    feed = Feed()
    made: list[int] = []

    def render(n: int) -> bytes:
        made.append(n)
        return b"%d" % n

    assert [feed.rendered(1, lambda: render(1)) for _ in range(3)] == [b"1"] * 3 and made == [1]
    for n in range(2, RENDERED + 2):
        feed.rendered(n, lambda n=n: render(n))  # type: ignore[misc]
    assert feed.rendered(1, lambda: render(1)) == b"1" and made.count(1) == 2, "the oldest made went first"


def test_a_cursor_is_never_an_event_id() -> None:
    feed = Feed()
    assert cursor_form(feed.cursor(12)) == (feed.epoch, 12)
    assert cursor_form(event(1).id) is None and cursor_form("01" * 13) is None


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
