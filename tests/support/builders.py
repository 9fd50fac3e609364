"""A small builder of event logs for unit tests: ids rise, entity ids are their event's id."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from service.core.events import ids
from service.core.events.events import Assertion, EntityWhy, Event, Origin, Payload, ReportAdded, make
from service.core.fold.fold import fold_all
from service.core.fold.state import State
from service.core.ledger import completion

HUMAN = Origin("human", True)
AGENT = Origin("agent", False)


def as_imported(events: Iterable[Event]) -> list[Event]:
    """The events as `self import superself` writes them: each marked as Superself's history
    (`refs.imported`), and the import's vouchers for the dones among them."""
    mark = {completion.IMPORTED: completion.SUPERSELF}
    marked = [msgspec.structs.replace(e, refs={**(e.refs or {}), **mark}) for e in events]
    return marked + completion.vouchers(marked, set(), HUMAN, "2026-12-01T00:00:00.000Z")


class Log:
    """Events for one project, ids increasing; entity ids are their creation event's id."""

    def __init__(self, project: str = "app", base: int = 1_800_000_000_000) -> None:
        self.project = project
        self.base = base
        self.events: list[Event] = []

    def next_id(self) -> str:
        n = len(self.events) + 1
        return ids.encode((self.base + 2000 * n) << 80 | n)

    def add(self, kind: str, payload: Payload | bytes, origin: Origin = HUMAN, ts: str | None = None) -> str:
        """Append one event; `payload` as bytes is written as it is (malformed on purpose)."""
        eid = self.next_id()
        n = len(self.events) + 1
        ts = ts or f"2026-11-30T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
        if isinstance(payload, bytes):
            self.events.append(Event(eid, ts, kind, origin, self.project, msgspec.Raw(payload)))
        else:
            self.events.append(make(eid, ts, kind, origin, self.project, payload))
        return eid

    def entity(self, text: str, *labels: str, proposed: bool = False, **kw: object) -> str:
        eid = self.next_id()
        kind = "entity.proposed" if proposed else "entity.confirmed"
        payload = Assertion(entity=eid, text=text, labels=labels, **kw)  # type: ignore[arg-type]
        assert self.add(kind, payload, AGENT if proposed else HUMAN) == eid
        return eid

    def done(self, entity: str) -> None:
        """Evidence, then done."""
        self.add("report.added", ReportAdded(text="shipped", work=entity, commit="c0ffee"))
        self.add("entity.done", EntityWhy(entity=entity))

    def state(self) -> State:
        return fold_all(self.events)
