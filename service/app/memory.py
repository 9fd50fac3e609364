"""A workspace store in memory: the store port (`ports.py`) without git or a filesystem.

Each log is its list of canonical lines, written only through the model's append gate
(`service/core/gates/event_gate.py`) and read back by decoding them; a log's state is `fold_all`
of what they hold, the fold the store on disk caches. Ids follow the model's rule
(`ids.next_id`) on a clock of the store's own, which starts at a fixed instant and draws its
random bits from a seeded generator, so a run is repeatable. For the application layer's
unit tests, and any caller that wants a workspace without a disk.
"""

from __future__ import annotations

import datetime as dt
import random
import threading
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from service.core.commands.commands import valid_slug
from service.core.commands.config import WorkspaceConfig, check_settings
from service.core.events import ids
from service.core.events.events import WORKSPACE_LOG, Event, Origin
from service.core.fold import hotslice
from service.core.fold.fold import fold_all
from service.core.fold.hotslice import ColdCounts
from service.core.fold.state import Entity, State
from service.core.gates.event_gate import admitted, in_order
from service.core.projections.render import neighbours

if TYPE_CHECKING:
    from service.app.ports import Quarantined
    from service.app.workspace import Workspace

START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
HUMAN = Origin("human", True)


@dataclass
class MemoryLog:
    """A log as read: its events in the order written (no line is ever quarantined)."""

    events: list[Event]
    quarantined: list[Quarantined] = field(default_factory=list)


@dataclass
class MemoryHot:
    """A log's hot slice (`hotslice.split` of its whole state) and the ids left outside it."""

    state: State
    cold: ColdCounts
    cold_ids: list[str]
    quarantined: list[Quarantined] = field(default_factory=list)

    aliases: list[str] = field(default_factory=list)  # of the records outside the slice
    filler: None = None  # every hot record is in the slice
    outside: dict[str, Entity] = field(default_factory=dict)

    def fetch(self, wanted: Collection[str]) -> list[Entity]:
        return [self.outside[i] for i in sorted(wanted) if i in self.outside]

    def near(self, ids: Collection[str]) -> list[str]:
        return list(neighbours(self.cold_ids)(ids))

    def holds(self, prefix: str) -> bool:
        start = prefix.lower()
        inside = self.state.entities.values()
        return (
            any(i.startswith(start) for i in [*self.state.entities, *self.cold_ids])
            or prefix in self.aliases
            or any(e.ledger is not None and e.ledger.alias == prefix for e in inside)
        )


class MemoryClock:
    """The store's clock: a millisecond that moves on with every id or time it gives."""

    def __init__(self, seed: int = 0, start_ms: int = START_MS) -> None:
        self.ms = start_ms
        self.mark: str | None = None
        self._random = random.Random(seed)

    def issue(self, n: int, floor: str | None) -> list[str]:
        """`n` new ids, each greater than any issued or seen, than `floor` and the one before."""
        last = max((m for m in (self.mark, floor) if m is not None), default=None)
        out: list[str] = []
        for _ in range(n):
            self.ms += 1
            last = ids.next_id(last, self.ms, self._random.getrandbits(80))
            out.append(last)
        self.observe(out)
        return out

    def observe(self, seen: Iterable[str]) -> None:
        top = max(seen, default=None)
        if top is not None and (self.mark is None or top > self.mark):
            self.mark = top

    def now(self) -> str:
        self.ms += 1
        moment = dt.datetime.fromtimestamp(self.ms // 1000, tz=dt.UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.ms % 1000:03d}Z"


class MemoryLocal:
    """This machine's ledger, in memory: recorded processes count as running (there is no
    machine to ask), links and the gate's rulings are kept as given."""

    def __init__(self) -> None:
        self.pids: dict[str, tuple[int, str]] = {}
        self.linked: dict[str, str] = {}
        self.rulings: list[dict[str, object]] = []

    def record_pid(self, work_id: str, pid: int, project: str) -> None:
        self.pids[work_id] = (pid, project)

    def runs(self) -> dict[str, str]:
        return dict.fromkeys(self.pids, "running")

    def links(self) -> dict[str, str]:
        return dict(self.linked)

    def link(self, slug: str, path: Path) -> None:
        self.linked[str(path)] = valid_slug(slug)

    def log_ruling(self, ruling: dict[str, object]) -> None:
        self.rulings.append(ruling)

    def pushers(self) -> dict[str, str]:
        return {}  # nothing is pushed into a store in memory


class MemoryStore:
    """A store's logs as lines in memory, one transaction at a time."""

    def __init__(self, config: WorkspaceConfig | None = None, *, seed: int = 0) -> None:
        self.lines: dict[str, list[bytes]] = {WORKSPACE_LOG: []}
        self.local = MemoryLocal()
        self.clock = MemoryClock(seed)
        self._config = config or WorkspaceConfig()
        self._lock = threading.RLock()

    def workspace(self, project: str | None, origin: Origin = HUMAN) -> Workspace:
        """The workspace of `project` on this store, writing as `origin`."""
        from service.app.workspace import Workspace

        return Workspace(self, project, origin)

    def logs(self) -> list[str]:
        return [WORKSPACE_LOG, *sorted(log for log in self.lines if log != WORKSPACE_LOG)]

    def read(self, log: str) -> MemoryLog:
        return MemoryLog([msgspec.json.decode(line, type=Event) for line in self.lines.get(_key(log), [])])

    def holding(self, log: str, text: str) -> list[Event]:
        needle = text.encode("utf-8")
        lines = self.lines.get(_key(log), [])
        return [msgspec.json.decode(line, type=Event) for line in lines if needle in line]

    def newest(self, log: str, n: int) -> list[Event]:
        return sorted(self.read(log).events, key=lambda e: e.id)[-n:]

    def state(self, log: str) -> tuple[State, list[Quarantined]]:
        return fold_all(self.read(log).events), []

    def refold(self, log: str) -> tuple[State, list[Quarantined]]:
        return self.state(log)

    def hot(self, log: str) -> MemoryHot:
        state, cold, counts = hotslice.split(self.state(log)[0])
        aliases = [
            r.entity.ledger.alias for r in cold if r.entity.ledger is not None and r.entity.ledger.alias
        ]
        outside = {r.entity.id: r.entity for r in cold}
        return MemoryHot(state, counts, sorted(outside), aliases=aliases, outside=outside)

    def config(self) -> WorkspaceConfig:
        return self._config

    def save_config(self, config: WorkspaceConfig) -> None:
        check_settings(config, self.local_facts())
        self._config = config

    def local_facts(self) -> tuple[str, ...]:
        """What no event may hold: the linked checkouts' paths (an in-memory store has no
        home folder or root of its own)."""
        return tuple(sorted(p for p in self.local.linked if Path(p).is_absolute() and len(Path(p).parts) > 2))

    @contextmanager
    def transaction(self, log: str) -> Iterator[MemoryTransaction]:
        _key(log)
        with self._lock:
            transaction = MemoryTransaction(self, log)
            try:
                yield transaction
            finally:
                transaction.closed = True

    @contextmanager
    def unit(self) -> Iterator[MemoryUnit]:
        with self._lock:
            yield MemoryUnit(self)

    def write(self, log: str, events: list[Event], last_id: str | None) -> None:
        """Append new events through the append gate: every line is checked before any is kept."""
        self.keep(log, self.admit(log, events, last_id), events)

    def admit(self, log: str, events: list[Event], last_id: str | None) -> list[bytes]:
        """The lines of new events bound for `log`, each through the append gate."""
        local = self.local_facts()
        return [admitted(log, event, writable=True, local=local) for event in in_order(events, last_id)]

    def keep(self, log: str, lines: list[bytes], events: list[Event]) -> None:
        self.lines.setdefault(_key(log), []).extend(lines)
        self.clock.observe(e.id for e in events)


class MemoryTransaction:
    """One unit of work on one log of a `MemoryStore`; its appends are folded into its state."""

    def __init__(self, store: MemoryStore, log: str) -> None:
        self.store = store
        self.log = log
        self.closed = False
        self._state: State | None = None

    @property
    def state(self) -> State:
        if self._state is None:
            self._state = self.store.state(self.log)[0]
        return self._state

    def view(self, names: Sequence[str] | None) -> State:
        return self.state  # the whole state: a memory store has no cold records to leave out

    @property
    def config(self) -> WorkspaceConfig:
        return self.store.config()

    def next_ids(self, n: int) -> list[str]:
        self._check_open()
        return self.store.clock.issue(n, self.state.last_id)

    def now(self) -> str:
        return self.store.clock.now()

    def append(self, events: list[Event]) -> None:
        self._check_open()
        if events:
            self.store.write(self.log, events, self.state.last_id)
            self._state = None

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("this transaction has ended; start a new one")


class MemoryUnit:
    """A unit of work over every log of a `MemoryStore`: its events are kept as it adds them
    (the store's lock is held meanwhile), every log's events checked before any is kept."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.config = store.config()
        self.now = store.clock.now()
        self.now_ms = store.clock.ms
        self._states: dict[str, State] = {}

    def state(self, log: str) -> State:
        if log not in self._states:
            self._states[log] = self.store.state(log)[0]
        return self._states[log]

    def new_id(self, floor: str | None) -> str:
        return self.store.clock.issue(1, floor)[0]

    def logged(self, log: str, event_id: str) -> Event | None:
        return next((e for e in self.store.read(log).events if e.id == event_id), None)

    def add_all(self, events: dict[str, list[Event]]) -> None:
        lines = {log: self.store.admit(log, batch, self.state(log).last_id) for log, batch in events.items()}
        for log, batch in events.items():
            self.store.keep(log, lines[log], batch)
            self._states.pop(log, None)


def _key(log: str) -> str:
    """The log key itself: "" (the workspace log) or a project slug, else Invalid."""
    return log if log == WORKSPACE_LOG else valid_slug(log)
