"""A stop signal's handler takes no lock: it runs between two bytecodes of whatever the main
thread was doing, perhaps inside the hub's lock, and waiting on that lock there never ends
(the service then ignored every further signal until killed)."""

from __future__ import annotations

import asyncio
import signal
import threading
from types import SimpleNamespace

import structlog
import uvicorn

from service.server.api.config import load
from service.server.run import Server


class Hub:
    """A hub whose streams end under its lock, as the live hub's do."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ended = False

    def end_streams(self) -> None:
        with self.lock:
            self.ended = True


def test_a_stop_signal_inside_the_hubs_lock_returns_and_ends_the_streams_on_the_loop() -> None:
    hub = Hub()
    app = SimpleNamespace(state={"hub": hub})
    server = Server(uvicorn.Config(app), load(None), structlog.get_logger())
    loop = asyncio.new_event_loop()
    server.loop = loop
    handled = threading.Event()

    def signal_arrives() -> None:  # as the handler would run: in the thread holding the lock
        with hub.lock:
            server.handle_exit(signal.SIGTERM, None)
            handled.set()

    inside = threading.Thread(target=signal_arrives, daemon=True)
    inside.start()
    assert handled.wait(10), "the handler waited on the hub's lock"
    assert server.should_exit and not hub.ended
    loop.call_soon(loop.stop)
    loop.run_forever()  # the loop's next turn ends the streams
    loop.close()
    assert hub.ended
