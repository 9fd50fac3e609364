"""The search index as a threaded server holds it: one object for the whole process.

Handlers run in a thread pool and a SQLite connection is for one thread at a time, so each
thread gets its own connection, made on its first use. One workspace is refreshed by one
thread at a time (the others wait for that refresh, then find nothing left to do); different
workspaces refresh side by side, SQLite's write lock ordering their writes. Whether a
workspace needs a refresh is one ref read and one row (`SearchIndex.refresh(moved_only=…)`),
so calling `refresh` before every search and after every write is cheap.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from service.adapters.data.workspaces import Data
from service.adapters.index.index import Refreshed, SearchIndex
from service.adapters.index.query import Page


class SharedIndex:
    """`DATA/index.sqlite` for every thread of a process."""

    def __init__(self, data: Data, on_indexed: Callable[[str], None] | None = None) -> None:
        """`on_indexed(workspace)`: told each time a workspace is up to its store's head."""
        self.data = data
        self._on_indexed = on_indexed
        self._mine = threading.local()
        self._guard = threading.Lock()  # over the two collections below
        self._opened: list[SearchIndex] = []
        self._locks: dict[str, threading.Lock] = {}

    def index(self) -> SearchIndex:
        """This thread's connection to the index."""
        held: SearchIndex | None = getattr(self._mine, "index", None)
        if held is None:
            held = SearchIndex(self.data, any_thread=True)  # closed by `close`, from any thread
            self._mine.index = held
            with self._guard:
                self._opened.append(held)
        return held

    def refresh(self, workspace: str) -> Refreshed:
        """Bring `workspace` up to its logs if its store's head commit moved since its last
        refresh (what a write calls after its commit); nothing read otherwise."""
        with self._lock(workspace):
            done = self.index().refresh([workspace], moved_only=True)
        if self._on_indexed is not None:
            self._on_indexed(workspace)
        return done

    def fresh(self, workspaces: Iterable[str]) -> None:
        """`refresh` each of `workspaces` (before a search)."""
        for name in workspaces:
            self.refresh(name)

    def refresh_all(self) -> Refreshed:
        """Every workspace in DATA whose store moved, and none that was removed (at start)."""
        done = self.index().refresh(moved_only=True)
        if self._on_indexed is not None:
            for name in self.data.names():
                self._on_indexed(name)
        return done

    def page(
        self,
        q: str,
        project: str | None,
        workspaces: Iterable[str],
        exposure: str | None,
        limit: int,
        hidden: bool = False,
    ) -> Page:
        return self.index().page(q, project, workspaces, exposure, limit, hidden)

    def close(self) -> None:
        with self._guard:
            opened, self._opened = self._opened, []
        for index in opened:
            index.close()

    def _lock(self, workspace: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(workspace, threading.Lock())
