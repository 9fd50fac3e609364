"""What the application layer needs of a store: the store port.

The wiring (`service/app/workspace.py`) and the application layer reach a store only through
these protocols. The store on disk (`service.adapters.store.Store`) satisfies them; so does the
in-memory store (`service/app/memory.py`), which runs the same append gate and fold without
git or a filesystem.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from service.core.commands.config import WorkspaceConfig
from service.core.events.events import Event
from service.core.fold.hotslice import ColdCounts
from service.core.fold.state import Entity, State

if TYPE_CHECKING:  # a type only: ports are imported where no context is rendered
    from service.core.projections.context import Filler


class Quarantined(Protocol):
    """A line the reader could not take as an event: where it is and why."""

    @property
    def file(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def reason(self) -> str: ...


class LogRead(Protocol):
    """Every event of a log in file order, and the lines that could not be read."""

    @property
    def events(self) -> list[Event]: ...
    @property
    def quarantined(self) -> Sequence[Quarantined]: ...


class HotSlice(Protocol):
    """The part of a log's state that context renders, with counts of the records outside it."""

    @property
    def state(self) -> State: ...
    @property
    def cold(self) -> ColdCounts: ...
    @property
    def quarantined(self) -> Sequence[Quarantined]: ...
    @property
    def filler(self) -> Filler | None:
        """The records kept out of the slice that only fill the full, progress or index section."""
        ...

    def near(self, ids: Collection[str]) -> list[str]:
        """The ids outside the slice that sort right before and after each of `ids`."""
        ...

    def holds(self, prefix: str) -> bool:
        """Whether the log has a record whose id starts with `prefix` or whose alias it is."""
        ...

    def fetch(self, wanted: Collection[str]) -> list[Entity]:
        """The records of `wanted` outside the slice (those that exist)."""
        ...


class TransactionPort(Protocol):
    """One locked unit of work on one log: fresh state, new ids, appends through the gate."""

    @property
    def state(self) -> State: ...
    def view(self, names: Sequence[str] | None) -> State:
        """What a command naming `names` (`requests.named`) reads; the whole state for None."""
        ...

    @property
    def config(self) -> WorkspaceConfig: ...
    def next_ids(self, n: int) -> list[str]: ...
    def now(self) -> str: ...
    def append(self, events: list[Event]) -> None: ...


class UnitPort(Protocol):
    """One locked unit of work over every log of a store, committed as one: events posted as
    they are (`service/app/posting.py`) may go to several logs, all or none."""

    @property
    def config(self) -> WorkspaceConfig: ...
    @property
    def now(self) -> str:
        """The instant every event of the unit is dated."""
        ...

    @property
    def now_ms(self) -> int:
        """The same instant in milliseconds since the epoch."""
        ...

    def state(self, log: str) -> State:
        """The log's state, with the unit's events so far folded in."""
        ...

    def new_id(self, floor: str | None) -> str:
        """An id after every id the store issued or saw and after `floor`."""
        ...

    def logged(self, log: str, event_id: str) -> Event | None:
        """The committed event of that id (of any log, when it is among those kept lately)."""
        ...

    def add_all(self, events: dict[str, list[Event]]) -> None:
        """Check every event with the append gate, then fold them in; none if one is refused."""
        ...


class LocalPort(Protocol):
    """What one machine keeps beside a store: recorded processes, linked checkouts, the
    gate's rulings."""

    def record_pid(self, work_id: str, pid: int, project: str) -> object: ...
    def runs(self) -> dict[str, str]: ...
    def links(self) -> dict[str, str]: ...
    def link(self, slug: str, path: Path) -> None: ...
    def log_ruling(self, ruling: dict[str, object]) -> None: ...
    def pushers(self) -> Mapping[str, str]:
        """Event id → who pushed it, where that is not the author the event claims."""
        ...


class StorePort(Protocol):
    """A workspace store: its logs, their folded state, its settings and its transactions."""

    @property
    def local(self) -> LocalPort: ...
    def logs(self) -> list[str]: ...
    def read(self, log: str) -> LogRead: ...
    def holding(self, log: str, text: str) -> list[Event]:
        """The events of a log whose line holds `text` (and perhaps a few more)."""
        ...

    def newest(self, log: str, n: int) -> list[Event]:
        """The `n` events of a log with the greatest ids, in id order."""
        ...

    def state(self, log: str) -> tuple[State, Sequence[Quarantined]]: ...
    def refold(self, log: str) -> tuple[State, Sequence[Quarantined]]: ...
    def hot(self, log: str) -> HotSlice: ...
    def config(self) -> WorkspaceConfig: ...
    def save_config(self, config: WorkspaceConfig) -> None: ...
    def transaction(self, log: str) -> AbstractContextManager[TransactionPort]: ...
    def unit(self) -> AbstractContextManager[UnitPort]:
        """A unit of work over every log, committed when it closes without an error."""
        ...
