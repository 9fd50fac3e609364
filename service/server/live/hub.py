"""Every workspace of a data directory the service has opened, each a `LiveWorkspace`:
opened on first use (a workspace added by `self admin` while the service runs is served at
once), closed when the service stops."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from service.server.live.space import LiveWorkspace, Observer, Quiet
from service.server.live.writer import Replicate, Writer

if TYPE_CHECKING:
    from service.adapters.data.workspaces import Data


class Hub:
    def __init__(self, data: Data, observer: Observer | None = None) -> None:
        self.data = data
        self.observer: Observer = observer or Quiet()
        self._open: dict[str, LiveWorkspace] = {}
        self._lock = threading.Lock()
        self.closed = False
        self.replicate: Replicate | None = None  # `--replicated`: set by the mirrors before any opens

    def _writer(self, live: LiveWorkspace) -> Writer:
        return Writer(live, self.replicate)

    def workspace(self, name: str) -> LiveWorkspace:
        """The live workspace `name` (NoSuchWorkspace when DATA has none of that name)."""
        found = self._open.get(name)
        if found is not None:
            return found
        with self._lock:
            if name not in self._open:
                self._open[name] = LiveWorkspace(name, self.data.open(name), self.observer, self._writer)
            return self._open[name]

    def held(self, name: str) -> LiveWorkspace | None:
        """The live workspace `name` if it is open already (never opens one)."""
        return self._open.get(name)

    def open_all(self) -> None:
        """Open every workspace of DATA; Unopenable names the first that cannot be."""
        from service.server.live.errors import Unopenable

        for name in self.data.names():
            try:
                self.workspace(name)
            except Exception as exc:
                raise Unopenable(name, exc) from exc

    def every(self) -> list[LiveWorkspace]:
        with self._lock:
            return list(self._open.values())

    def end_streams(self) -> None:
        """Wake and end every live stream (the service is stopping; writes still finish)."""
        for live in self.every():
            live.feed.close()

    def close(self) -> None:
        """Finish every workspace's writes in flight, end the streams, close the stores."""
        self.closed = True
        for live in self.every():
            live.close()
