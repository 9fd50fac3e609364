"""The `refs.imported: superself` mark cannot relax the completion gate by itself.

An attacker who can put an event in a log — a push, a remote a sync fetches from, a hand
edit — writes `entity.done` with the mark and no evidence. The fold refuses it, as it refuses
any evidence-free done: the gate is relaxed only for a done an import's voucher
(`import.superself`, written by `self import superself` alone, before the dones it names)
vouches for. A voucher syncs with the events it names, so a legitimate import reads as
imported on every replica, whatever order the events reach it in.
"""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.adapters.store import append
from service.core.errors import Invalid
from service.core.events import ids
from service.core.events.events import (
    MAX_EVENT_BYTES,
    VOUCHER,
    WRITABLE,
    EntityWhy,
    Event,
    ReportAdded,
    Vouched,
    canonical,
    make,
)
from service.core.events.posted import decode
from service.core.fold.fold import fold_all
from service.core.fold.state import State
from service.core.ledger import completion
from tests.support.builders import HUMAN, Log


def marked(event: Event) -> Event:
    refs = {**(event.refs or {}), completion.IMPORTED: completion.SUPERSELF}
    return msgspec.structs.replace(event, refs=refs)


def unit_and_done() -> tuple[Log, Event]:
    """A unit, then an evidence-free done of it carrying the import mark."""
    log = Log()
    unit = log.entity("ship it", "work")
    log.add("entity.done", EntityWhy(entity=unit))
    return log, marked(log.events.pop())


def refused(state: State) -> list[str]:
    return [s.entity or "" for s in state.signals if s.kind == "done-refused"]


def test_a_marked_done_without_a_voucher_is_refused() -> None:
    log, done = unit_and_done()
    state = fold_all([*log.events, done])
    unit = log.events[0]
    assert refused(state) == [msgspec.json.decode(unit.payload)["entity"]]
    assert state.vouched == {}


def test_a_voucher_written_after_the_done_does_not_vouch_for_it() -> None:
    """A forger appending a voucher now, with a fresh id, comes after the done in id order."""
    log, done = unit_and_done()
    fresh = ids.encode(ids.decode(done.id) + (1 << 80))  # a millisecond after the done
    late = make(fresh, "2030-01-01T00:00:00.000Z", VOUCHER, HUMAN, "app", Vouched((done.id,)))
    assert refused(fold_all([*log.events, done, late]))


def test_an_imported_done_with_its_voucher_reads_as_judged_in_any_arrival_order() -> None:
    log, done = unit_and_done()
    [vouched] = completion.vouchers([*log.events, done], set(), HUMAN, "2030-01-01T00:00:00.000Z")
    assert vouched.id < done.id
    events = [*log.events, done, vouched]
    for arrival in (events, events[::-1]):
        state = fold_all(arrival)
        assert refused(state) == [] and state.vouched == {done.id: vouched.id}


def test_a_voucher_names_only_the_dones_the_log_lacks() -> None:
    log, done = unit_and_done()
    assert completion.vouchers([*log.events, done], {done.id}, HUMAN, "t") == []
    assert completion.vouchers(log.events, set(), HUMAN, "t") == []  # nothing marked


def test_no_command_or_post_may_write_the_mark_or_a_voucher() -> None:
    log, done = unit_and_done()
    with pytest.raises(Invalid, match="import alone"):
        append.check("app", done)
    [voucher] = completion.vouchers([*log.events, done], set(), HUMAN, "t")
    assert VOUCHER not in WRITABLE
    with pytest.raises(Invalid, match="not a type any command writes"):
        append.check("app", voucher)
    with pytest.raises(Invalid):
        decode(msgspec.json.encode({"events": [{"type": VOUCHER, "project": "app", "payload": {}}]}))


@given(st.integers(0, 2**80 - 1))
def test_the_voucher_comes_right_before_the_first_done_it_names(random_part: int) -> None:
    _, done = unit_and_done()
    first = msgspec.structs.replace(done, id=ids.encode(ids.time_ms(done.id) << 80 | random_part))
    [found] = completion.vouchers([first], set(), HUMAN, "t")
    assert ids.decode(found.id) == ids.decode(first.id) - 1
    assert msgspec.json.decode(found.payload)["judged"] == [first.id]


# --- Superself's legacy closes: the same voucher rule --------------------------------------

LEGACY_CLOSES = (
    ("work.done", {"work": "UNIT"}),
    ("milestone.reached", {"milestone": "UNIT"}),
    ("objective.closed", {"objective": "UNIT", "as": "reached"}),
)


def legacy_close(log: Log, unit: str, kind: str, payload: dict[str, str]) -> Event:
    """A legacy close naming `unit`, built as a forger (or a sync) would bring it."""
    body = {k: unit if v == "UNIT" else v for k, v in payload.items()}
    log.add(kind, msgspec.json.encode(body))
    return log.events.pop()


@pytest.mark.parametrize(("kind", "payload"), LEGACY_CLOSES)
def test_a_legacy_close_no_voucher_names_is_ruled_by_the_gate(kind: str, payload: dict[str, str]) -> None:
    """`work.done`, `milestone.reached` and `objective.closed` name any record by its id; with
    or without the mark, none an import vouched for closes an evidence-free record."""
    log = Log()
    unit = log.entity("ship it", "work")
    close = legacy_close(log, unit, kind, payload)
    for arrived in (close, marked(close)):
        state = fold_all([*log.events, arrived])
        assert refused(state) == [unit] and state.entities[unit].execution is None


@pytest.mark.parametrize(("kind", "payload"), LEGACY_CLOSES)
def test_a_legacy_close_the_import_vouched_for_reads_as_superself_judged_it(
    kind: str, payload: dict[str, str]
) -> None:
    log = Log()
    unit = log.entity("ship it", "work")
    close = marked(legacy_close(log, unit, kind, payload))
    [vouched] = completion.vouchers([close], set(), HUMAN, "t")
    assert msgspec.json.decode(vouched.payload)["judged"] == [close.id]
    late = make(ids.encode(ids.decode(close.id) + 1), "t", VOUCHER, HUMAN, "app", Vouched((close.id,)))
    assert refused(fold_all([*log.events, close, late]))  # a voucher after it vouches for nothing
    state = fold_all([vouched, *log.events, close])
    assert refused(state) == [] and state.entities[unit].execution == "done"


# --- a large import: as many vouchers as it takes --------------------------------------------

CLOSE_KINDS = ("entity.done", *(kind for kind, _ in LEGACY_CLOSES))


class TightLog(Log):
    """A log whose ids lie `gap` apart in one millisecond: the id just before a close is
    often another event's, so a voucher's place has to be searched for."""

    def __init__(self, gap: int) -> None:
        super().__init__()
        self.gap = gap

    def next_id(self) -> str:
        return ids.encode(self.base << 80 | (1 << 40) + self.gap * (len(self.events) + 1))


def closed_units(log: Log, closes: list[tuple[str, bool, bool]]) -> list[Event]:
    """One unit per close, `(kind, marked, evidence)`: closed by `kind`, the close carrying the
    import's mark or not, the unit with a commit report or none."""
    out = []
    for kind, is_marked, evidence in closes:
        unit = log.entity("ship it", "work")
        if evidence:
            log.add("report.added", ReportAdded(text="shipped", work=unit, commit="c0ffee"))
        if kind == "entity.done":
            log.add(kind, EntityWhy(entity=unit))
            close = log.events.pop()
        else:
            close = legacy_close(log, unit, kind, dict(LEGACY_CLOSES)[kind])
        log.events.append(marked(close) if is_marked else close)
        out.append(log.events[-1])
    return out


def read_alike(state: State) -> tuple[object, ...]:
    """What a fold says about the records: all but which voucher named a done, and the count."""
    return state.entities, state.reports, state.signals, set(state.vouched)


def test_a_full_voucher_stays_well_under_the_event_cap() -> None:
    log = TightLog(gap=2)
    closes = closed_units(log, [("entity.done", True, False)] * (completion.VOUCHED_PER_EVENT + 1))
    full, rest = completion.vouchers(log.events, set(), HUMAN, "2030-01-01T00:00:00.000Z")
    assert len(canonical(full)) <= MAX_EVENT_BYTES // 2
    assert msgspec.json.decode(rest.payload)["judged"] == [closes[-1].id]


@given(
    st.integers(1, 3),
    st.lists(st.tuples(st.sampled_from(CLOSE_KINDS), st.booleans(), st.booleans()), min_size=1, max_size=12),
    st.integers(1, 5),
)
def test_split_vouchers_fold_as_one_voucher_does(
    gap: int, closes: list[tuple[str, bool, bool]], per: int
) -> None:
    """However a small import's closes are split among vouchers, the log folds as it does with
    the one voucher naming them all, in any arrival order."""
    log = TightLog(gap)
    closed_units(log, closes)
    one = completion.vouchers(log.events, set(), HUMAN, "t", per=1_000)
    split = completion.vouchers(log.events, set(), HUMAN, "t", per=per)
    assert len(one) == min(1, len(split)) and len(split) == -(-sum(m for _, m, _ in closes) // per)
    named = [i for v in split for i in msgspec.json.decode(v.payload)["judged"]]
    assert named == [i for v in one for i in msgspec.json.decode(v.payload)["judged"]]
    held = {e.id for e in log.events}
    assert len({v.id for v in split}) == len(split) and not held & {v.id for v in split}
    for v in split:
        assert v.id < min(msgspec.json.decode(v.payload)["judged"])
    expected = read_alike(fold_all([*log.events, *one]))
    assert read_alike(fold_all([*log.events, *split])) == expected
    assert read_alike(fold_all([*split, *log.events][::-1])) == expected


def test_a_forged_close_reads_gated_beside_an_import_of_many_vouchers() -> None:
    """The import's vouchers name its own closes only; a marked close someone appends later,
    with a voucher after it, is still ruled by the gate."""
    log = TightLog(gap=1)
    closed_units(log, [(kind, True, False) for kind in CLOSE_KINDS] * 3)
    imported = completion.vouchers(log.events, set(), HUMAN, "t", per=2)
    assert len(imported) == 6
    unit = log.entity("not done at all", "work")
    log.add("entity.done", EntityWhy(entity=unit))
    forged = marked(log.events.pop())
    late = make(ids.encode(ids.decode(forged.id) + 1), "t", VOUCHER, HUMAN, "app", Vouched((forged.id,)))
    state = fold_all([*log.events, *imported, forged, late])
    assert refused(state) == [unit] and state.entities[unit].execution is None
    assert sum(e.execution == "done" for e in state.entities.values()) == 12
