"""The hot slice: the part of a state that context renders, and what the rest adds up to.

Context on a huge log must not load every record. A record is *hot* when context shows it
as a row or names it in a command; every other live record only adds to a count. The store
keeps hot records in a small snapshot and the cold ones where single records can be fetched,
and folds new events into the slice after fetching the records those events name.

Most of a long-lived log's hot records only fill a section: confirmed project records at
full or index exposure, or units in progress, with nothing a request reads of them but their
row (`fills`). A store may keep those outside the slice too, in an order context reads them in
(section, priority, recency), counted by section and by how status counts them
(`ColdCounts.full`, `index`, `progress`, `units`): context reads the first rows of each section
and status the counts.

The ledger's facts (`State.ledger`) are sliced the same way: the slice keeps the facts whose
derived views a reader of the slice asks for (`kept_facts`) and every fact those views read,
so a view comes out of the slice as it comes out of the whole state. The rest sit in the cold
table with their records and come back with them (`complete`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterable, Iterator
from functools import partial

import msgspec

from service.core.events.events import (
    Assertion,
    Event,
    Execution,
    Legacy,
    Linked,
    Placed,
    ReportAdded,
    RunExited,
    RunStarted,
    Superseded,
    payload_of,
)
from service.core.fold.state import Entity, Fact, State
from service.core.ledger.chains import GROUNDED
from service.core.ledger.ledger import moot
from service.core.projections.render import neighbours

# where status counts a work unit, in its order
WORK_STATES: tuple[Execution | None, ...] = ("in-progress", "blocked", None, "done", "retired")


def _no_units() -> list[int]:
    return [0] * len(WORK_STATES)


class ColdCounts(msgspec.Struct):
    """Records outside the slice, by how context (live ones) and status count them; `full`
    `index` and `progress`: those that only fill that section (`fills`)."""

    search: int = 0
    open_work: int = 0
    units: list[int] = msgspec.field(default_factory=_no_units)  # by `work_state`
    full: int = 0
    index: int = 0
    progress: int = 0


def work_state(e: Entity) -> int | None:
    """Where status counts a work unit (its place in WORK_STATES): units ever confirmed, by
    execution; a proposal is not work yet; a unit confirmed and later withdrawn or superseded
    still counts by its working state (Superself's `confirmedOnce`)."""
    if is_work(e) and (e.status == "confirmed" or e.confirmed_once) and e.execution in WORK_STATES:
        return WORK_STATES.index(e.execution)
    return None


def status_reads(e: Entity) -> bool:
    """Status reads it whole wherever it is: a live goal or objective, a live moot question,
    a milestone with a member-of link (it counts while that parent is an open objective)."""
    if "milestone" in e.labels and any(link.type == "member-of" for link in e.links):
        return True
    if not e.live:
        return False
    moot_question = "question" in e.labels and e.ledger is not None and moot(e.ledger)
    return "goal" in e.labels or "objective" in e.labels or moot_question


class ColdRecord(msgspec.Struct, gc=False):
    """A record outside the slice with, for a ledger record, its fact (which the slice may
    also hold, when a view it keeps reads it)."""

    entity: Entity
    fact: Fact | None = None


def is_work(e: Entity) -> bool:
    return "work" in e.labels


def is_hot(e: Entity) -> bool:
    """Context renders it as a row or names it in a command."""
    if not e.live:
        return False
    return bool(e.exposure != "search" or e.status == "proposed" or e.execution or e.pending or e.target)


def stays_hot(state: State, e: Entity) -> bool:
    """Hot, named by a placement waiting on it (its confirm command is rendered), or replaced
    by a proposal: confirming it supersedes this record, and the confirmation names only
    the proposal."""
    return is_hot(e) or e.id in state.pairs or e.id in state.awaiting


def kept(state: State, e: Entity) -> bool:
    """In the slice: what context renders or names (`stays_hot`), and what status reads."""
    return stays_hot(state, e) or status_reads(e)


def add_cold(counts: ColdCounts, e: Entity, sign: int = 1) -> None:
    """Count (or with sign=-1, uncount) a record that sits outside the slice."""
    _count(counts, _counted(e), sign)


def section(e: Entity) -> str:
    """The section a record that only fills one fills (`fills`): a unit in progress fills
    "progress", any other record the section of its exposure."""
    return "progress" if e.execution == "in-progress" else e.exposure


def fills(state: State, e: Entity, fact: Fact | None) -> bool:
    """Whether `e` only fills its section: a confirmed record of this project, at full or index
    exposure or a unit in progress, whose row is all a reader takes from it, and stays so
    until an event names it. No proposal, placement, target or run in the log; nothing waits
    on it or would replace it; status reads nothing of it but its work count; its ledger fact
    (if any) derives a plain view from itself alone (`inert`)."""
    placed = e.execution == "in-progress" or (e.execution is None and e.exposure in ("full", "index"))
    return (
        placed
        and e.status == "confirmed"
        and e.scope == "project"
        and not (e.pending or e.target)
        and e.id not in state.pairs
        and e.id not in state.awaiting
        and e.id not in state.runs
        and not status_reads(e)
        and (fact is None or inert(fact))
    )


def inert(fact: Fact) -> bool:
    """A current accepted claim or adopted decision citing nothing and answering nothing: its
    derived view is plain (no marks) whatever the other facts say."""
    return (
        fact.kind in GROUNDED
        and fact.current
        and not fact.retracted
        and fact.state in ("accepted", "adopted")
        and not (fact.supports or fact.depends_on or fact.answers or fact.superseded_by)
    )


def placing(e: Entity) -> tuple[bool, int, str, str]:
    """The order of the records that fill a section (`views.ordered`'s): priority, unset last,
    then the newest first (`created` descending), then by id."""
    return (e.priority is None, e.priority or 0, _descending(e.created), e.id)


_INVERSE = 0x10FFFE
_ASCII_INVERSE = {code: _INVERSE - code for code in range(128)}


def _descending(text: str) -> str:
    """A key that sorts strings in reverse order (a string after every string it starts)."""
    if text.isascii():  # an id: one translation
        return text.translate(_ASCII_INVERSE) + chr(_INVERSE + 1)
    return "".join(chr(_INVERSE - ord(c)) for c in text) + chr(_INVERSE + 1)


def add_filler(counts: ColdCounts, e: Entity, sign: int = 1) -> None:
    """Count (or uncount) a record kept outside the slice that only fills its section."""
    _count(counts, _counted(e), sign)
    filled = section(e)
    setattr(counts, filled, getattr(counts, filled) + sign)


_Counted = tuple[int | None, str | None]  # a cold record's place in ColdCounts


def _counted(e: Entity) -> _Counted:
    """Where a record outside the slice counts: its work unit and "open_work" or "search"."""
    if not e.live or is_hot(e):
        return work_state(e), None
    return work_state(e), "open_work" if is_work(e) else "search"


def _count(counts: ColdCounts, counted: _Counted, sign: int) -> None:
    unit, kind = counted
    if unit is not None:
        counts.units[unit] += sign
    if kind == "open_work":
        counts.open_work += sign
    elif kind == "search":
        counts.search += sign


def named(event: Event) -> set[str] | None:
    """Ids of the records folding `event` reads or writes; None when it reads the whole state."""
    try:
        payload = payload_of(event)
    except msgspec.ValidationError:
        return set()  # the fold reports it and touches no record
    found: set[str] = set()
    if isinstance(payload, Legacy):
        return None  # Superself's old kinds name records in refs and read other records' state
    entity = getattr(payload, "entity", None)
    if isinstance(entity, str):
        found.add(entity)
    if isinstance(payload, Assertion):
        found.update(link.target for link in payload.links)
    elif isinstance(payload, Superseded):
        found.update(x for x in (payload.by, payload.successor) if x)
    elif isinstance(payload, Linked):
        found.add(payload.link.target)
    elif isinstance(payload, Placed) and payload.pair:
        found.add(payload.pair)
    elif isinstance(payload, ReportAdded | RunStarted | RunExited):
        work = getattr(payload, "work", None) or (event.refs or {}).get("work")
        if isinstance(work, str):
            found.add(work)
    return found


def touched(state: State, events: list[Event]) -> set[str] | None:
    """Ids of the records folding `events` into the slice `state` reads or writes, with the
    records whose placements wait on them and those they would replace; None when one of the
    events reads the whole state."""
    found: set[str] = set()
    for event in events:
        ids = named(event)
        if ids is None:
            return None
        found |= ids
    paired = {other for entity_id in found for other in state.pairs.get(entity_id, ())}
    return found | paired | _replaced(state, found)


def _replaced(state: State, found: set[str]) -> set[str]:
    """The records a proposal among `found` would replace, which wait on it (`awaiting`) until
    it leaves; and theirs in turn: a proposal that leaves because another one replacing it was
    confirmed frees the records it would have replaced, which no event names."""
    replaced: set[str] = set()
    frontier = found
    while frontier:
        frontier = (
            {old for entity_id in frontier if (e := state.entities.get(entity_id)) for old in e.supersedes}
            - replaced
            - found
        )
        replaced |= frontier
    return replaced


def filed(touched: Collection[str]) -> list[str]:
    """The keys of `State.reports` a fold of events touching `touched` reads or writes: a
    report is filed under the unit it names, or under "" when it names none."""
    return sorted({*touched, ""})


def split(state: State, fill: bool = False) -> tuple[State, list[ColdRecord], ColdCounts]:
    """Partition a whole state into its slice, the cold records and their counts. The slice
    holds no reports: context and status read none, and a command reads those of the records
    it names (`touched`, `view`), which the store keeps beside the cold records. With `fill`,
    the records that only fill a section (`fills`) are left out too, among the cold ones."""
    hot = msgspec.structs.replace(state, entities={}, reports={})
    cold: list[ColdRecord] = []
    counts = ColdCounts()
    for entity_id, e in state.entities.items():
        fact = state.ledger.get(entity_id)
        if not kept(state, e):
            cold.append(ColdRecord(e, fact))
            add_cold(counts, e)
        elif fill and fills(state, e, fact):
            cold.append(ColdRecord(e, fact))
            add_filler(counts, e)
        else:
            hot.entities[entity_id] = e
    hot.ledger = kept_facts(state.ledger, hot.entities)
    return hot, cold, counts


def bring_in(
    hot: State, counts: ColdCounts, records: list[ColdRecord], filling: Collection[str] = ()
) -> None:
    """Move fetched cold records into the slice before events about them are folded
    (`filling`: the ids of those that were kept out as filling a section)."""
    for record in records:
        hot.entities[record.entity.id] = record.entity
        if record.fact is not None:
            hot.ledger.setdefault(record.entity.id, record.fact)
        if record.entity.id in filling:
            add_filler(counts, record.entity, -1)
        else:
            add_cold(counts, record.entity, -1)


def push_out(hot: State, counts: ColdCounts, touched: set[str], fill: bool = False) -> list[ColdRecord]:
    """After a fold, move touched records that are no longer hot out of the slice (with
    `fill`, those that only fill a section too: `fills` of the slice tells them apart)."""
    leaving: list[ColdRecord] = []
    for entity_id in sorted(touched):
        e = hot.entities.get(entity_id)
        if e is None:
            continue
        fact = hot.ledger.get(entity_id)
        if not kept(hot, e):
            add_cold(counts, e)
        elif fill and fills(hot, e, fact):
            add_filler(counts, e)
        else:
            continue
        del hot.entities[entity_id]
        leaving.append(ColdRecord(e, fact))
    return leaving


def with_records(hot: State, records: list[ColdRecord]) -> State:
    """The slice with cold records added to it: a state a command reads as it reads the whole
    state, when `records` hold every record it names (`requests.named`) and its reports hold
    theirs. `hot` is changed in place and returned."""
    for record in records:
        hot.entities[record.entity.id] = record.entity
        if record.fact is not None:
            hot.ledger.setdefault(record.entity.id, record.fact)
    return hot


# --- the ledger's facts ----------------------------------------------------------------------


def cites(fact: Fact) -> Iterable[str]:
    """The facts a derived view of `fact` reads: its grounds, its prerequisites and its
    successor (a chain is followed through supersessions, reading each successor's reason)."""
    for members in fact.supports:
        yield from members
    yield from fact.depends_on
    if fact.superseded_by:
        yield fact.superseded_by


def asked(fact: Fact) -> bool:
    """A fact whose view a reader of the slice asks for whatever it renders: a current claim
    or decision with grounds or prerequisites (status and context count what those owe) or
    that answers a question (a question is resolved by its current answers)."""
    return fact.current and fact.kind in GROUNDED and bool(fact.supports or fact.depends_on or fact.answers)


def kept_facts(facts: dict[str, Fact], entities: Collection[str]) -> dict[str, Fact]:
    """The facts a slice keeps: those `asked` for, those of the records it keeps, and every
    fact their views read (closed under `cites`)."""
    roots = [i for i, fact in facts.items() if i in entities or asked(fact)]
    found = dict.fromkeys(roots)
    stack = list(roots)
    while stack:
        for cited in cites(facts[stack.pop()]):
            if cited in facts and cited not in found:
                found[cited] = None
                stack.append(cited)
    return {i: facts[i] for i in facts if i in found}


def complete(hot: State, start: Iterable[str], fetch: Callable[[list[str]], list[ColdRecord]]) -> None:
    """Bring into the slice every fact the views of `start` read that it lacks, fetching them
    (and what they read in turn) by id. The slice's other facts already hold what they read."""
    frontier = set(start)
    while frontier:
        wanted = sorted(
            {c for i in frontier if (fact := hot.ledger.get(i)) for c in cites(fact) if c not in hot.ledger}
        )
        fetched = {r.entity.id: r.fact for r in fetch(wanted) if r.fact is not None} if wanted else {}
        hot.ledger.update(fetched)
        frontier = set(fetched)


class Filled:
    """The records of a slice in memory that only fill a section (`fills`), each section's
    in `placing` order: how many, and each when reached (`context.Filler`)."""

    def __init__(self, records: Iterable[Entity] = ()) -> None:
        self.placed: dict[str, tuple[str, tuple[bool, int, str, str]]] = {}
        self.order: dict[str, list[tuple[bool, int, str, str]]] = {
            s: [] for s in ("full", "progress", "index")
        }
        self.records: dict[str, Entity] = {}
        for e in records:
            self._place(e, self.order[section(e)].append)
        for keys in self.order.values():
            keys.sort()

    def _place(self, e: Entity, put: Callable[[tuple[bool, int, str, str]], None]) -> None:
        key = placing(e)
        put(key)
        self.placed[e.id] = (section(e), key)
        self.records[e.id] = e

    def add(self, e: Entity) -> None:
        self._place(e, partial(bisect.insort, self.order[section(e)]))

    def remove(self, entity_id: str) -> None:
        filled, key = self.placed.pop(entity_id)
        keys = self.order[filled]
        del keys[bisect.bisect_left(keys, key)]
        del self.records[entity_id]

    def count(self, section: str) -> int:
        return len(self.order[section])

    def rows(self, section: str) -> Iterator[Entity]:
        return (self.records[key[3]] for key in self.order[section])


class Kept:
    """The slice of a whole state held in memory beside it (the service's): the records
    `split` keeps, advanced by the records each batch of events touches, as the store's slice
    cache is advanced; every id in order, for the ids next to a shown one. With `fill` (a
    project's log), the records that only fill a section are held apart (`filled`)."""

    def __init__(self, whole: State, fill: bool = False) -> None:
        self.whole = whole
        self.fill = fill
        self.rebuild()

    def rebuild(self) -> None:
        self.entities: dict[str, Entity] = {}
        self.cold = ColdCounts()
        filling: list[Entity] = []
        for entity_id, e in self.whole.entities.items():
            if not kept(self.whole, e):
                add_cold(self.cold, e)
            elif self.fill and fills(self.whole, e, self.whole.ledger.get(entity_id)):
                filling.append(e)
                add_filler(self.cold, e)
            else:
                self.entities[entity_id] = e
        self.filled = Filled(filling)
        self.ids = sorted(self.whole.entities)

    @property
    def state(self) -> State:
        """The slice as a state: the whole state's but for its records (reports are read by
        record id, so the whole state's serve)."""
        return msgspec.structs.replace(self.whole, entities=self.entities)

    def advance(self, events: list[Event], fold: Callable[[], None]) -> None:
        """`fold()` folds `events` into the whole state; the slice follows it."""
        named = touched(self.whole, events)
        records = self.whole.entities
        if named is None:
            try:
                fold()
            finally:
                self.rebuild()
            return
        before = len(records)
        counted = [_counted(records[i]) for i in named if i in records and i not in self.entities]
        filled = [section(records[i]) for i in named if i in self.filled.placed]
        new = [i for i in named if i not in records]
        try:
            fold()
        except BaseException:
            self.rebuild()
            raise
        records = self.whole.entities
        made = sorted(i for i in new if i in records)
        if len(records) != before + len(made):
            self.rebuild()  # a record no event named: not what a fold does
            return
        for place in counted:
            _count(self.cold, place, -1)
        for filler in filled:
            setattr(self.cold, filler, getattr(self.cold, filler) - 1)
        for i in named:
            self._place(i, records.get(i))
        for i in made:
            bisect.insort(self.ids, i)

    def _place(self, entity_id: str, e: Entity | None) -> None:
        """Where a record a batch touched goes: the slice, the filled sections, or out."""
        if entity_id in self.filled.placed:
            self.filled.remove(entity_id)
        if e is None:
            return
        if not kept(self.whole, e):
            self.entities.pop(entity_id, None)
            add_cold(self.cold, e)
        elif self.fill and fills(self.whole, e, self.whole.ledger.get(entity_id)):
            self.entities.pop(entity_id, None)
            self.filled.add(e)
            add_filler(self.cold, e)
        else:
            self.entities[entity_id] = e

    def near(self, ids: Collection[str]) -> list[str]:
        """The ids right before and after each of `ids` (those in the slice among them, which
        the slice's own ids hold anyway: a short id comes out the same)."""
        return list(neighbours(self.ids)(ids))

    def fetch(self, wanted: Collection[str]) -> list[Entity]:
        """The records of `wanted` outside the slice (those that exist), by id."""
        records = self.whole.entities
        return [records[i] for i in sorted(wanted) if i in records and i not in self.entities]

    def holds(self, prefix: str) -> bool:
        """Whether the state has a record whose id starts with `prefix` (any case) or whose
        imported alias is `prefix`."""
        start = prefix.lower()
        at = bisect.bisect_left(self.ids, start)
        if at < len(self.ids) and self.ids[at].startswith(start):
            return True
        return any(e.ledger is not None and e.ledger.alias == prefix for e in self.whole.entities.values())
