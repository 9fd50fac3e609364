"""A unit of work over every log of a store: new ids and one instant shared by its writes,
each event checked by the append gate and folded into its log's state, and the checked lines
kept for one commit.

The service's group commit runs each batch of jobs as one unit on the states it holds in
memory (`service/server/live/writer.py`); `Store.unit` runs one on the states folded from disk and
commits it as it closes. Either way the application layer sees the same port
(`service/app/ports.py: UnitPort`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from service.adapters.store import clock
from service.core.commands.config import WorkspaceConfig
from service.core.errors import Invalid
from service.core.events import ids, order
from service.core.events.events import Event
from service.core.fold.state import State

StateOf = Callable[[str], State]
Apply = Callable[[str, list[Event]], None]
Recent = Callable[[str], Event | None]


class Checking(Protocol):
    """What a unit needs of its store (`store.Store`)."""

    @property
    def root(self) -> Path: ...
    @property
    def clock_file(self) -> Path: ...
    def local_facts(self) -> tuple[str, ...]: ...
    def config(self) -> WorkspaceConfig: ...
    def check(self, log: str, events: list[Event], local: tuple[str, ...]) -> list[bytes]: ...


class Unit:
    """The writes of one commit: the ids and the time they share, their checked lines."""

    def __init__(
        self, store: Checking, state_of: StateOf, apply: Apply, recent: Recent | None = None
    ) -> None:
        """`state_of(log)`: a log's state as the unit's writes left it so far; `apply(log,
        events)` folds checked events into it; `recent(id)`: an event committed lately, if
        the caller keeps them (else the logs are read)."""
        self.store = store
        self.now_ms = clock.wall_ms()
        self.now = clock.now()  # the instant every event of the unit is dated
        self.local = store.local_facts()
        self.config: WorkspaceConfig = store.config()
        self.lines: dict[str, list[bytes]] = {}
        self.events: list[Event] = []
        self.issuer = clock.Issuer(clock.high_water(store.clock_file))
        self._state_of = state_of
        self._apply = apply
        self._recent = recent

    def state(self, log: str) -> State:
        return self._state_of(log)

    def new_id(self, floor: str | None) -> str:
        """An id after every id issued or seen and after `floor` (the log's last)."""
        return self.issuer.issue(floor)

    def logged(self, log: str, event_id: str) -> Event | None:
        """The committed event of `log` with id `event_id`, decoding only the segments that may
        hold it."""
        from service.adapters.store.segments import read_after

        found = self._recent(event_id) if self._recent is not None else None
        if found is not None:
            return found
        number = ids.decode(event_id)
        before = ids.encode(number - 1) if number else None
        return next((e for e in read_after(self.store.root, log, before) if e.id == event_id), None)

    def add(self, log: str, events: list[Event]) -> None:
        self.add_all({log: events})

    def add_all(self, events: dict[str, list[Event]]) -> None:
        """Check every event (the append gate's checks, in id order after each log's last),
        then fold them into the states; nothing is folded if one is refused."""
        checked: dict[str, list[bytes]] = {}
        for log, batch in events.items():
            found = order.not_after((e.id for e in batch), self.state(log).last_id)
            if found is not None:
                raise Invalid(f"event {found[0]} is not after {found[1]}, the last id of its log", field="id")
            checked[log] = self.store.check(log, batch, self.local)
        for log, batch in events.items():
            if batch:
                self._apply(log, batch)
                self.lines.setdefault(log, []).extend(checked[log])
                self.events.extend(batch)
                self.issuer.seen(batch[-1].id)
