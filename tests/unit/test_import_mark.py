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

from service.model import completion, ids
from service.model.errors import Invalid
from service.model.events import VOUCHER, WRITABLE, EntityWhy, Event, Vouched, make
from service.model.fold import fold_all
from service.model.posted import decode
from service.model.state import State
from service.store import append
from tests.builders import HUMAN, Log


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
    assert state.vouched == []


def test_a_voucher_written_after_the_done_does_not_vouch_for_it() -> None:
    """A forger appending a voucher now, with a fresh id, comes after the done in id order."""
    log, done = unit_and_done()
    fresh = ids.encode(ids.decode(done.id) + (1 << 80))  # a millisecond after the done
    late = make(fresh, "2030-01-01T00:00:00.000Z", VOUCHER, HUMAN, "app", Vouched((done.id,)))
    assert refused(fold_all([*log.events, done, late]))


def test_an_imported_done_with_its_voucher_reads_as_judged_in_any_arrival_order() -> None:
    log, done = unit_and_done()
    vouched = completion.voucher([*log.events, done], set(), HUMAN, "2030-01-01T00:00:00.000Z")
    assert vouched is not None and vouched.id < done.id
    events = [*log.events, done, vouched]
    for arrival in (events, events[::-1]):
        state = fold_all(arrival)
        assert refused(state) == [] and state.vouched == [done.id]


def test_a_voucher_names_only_the_dones_the_log_lacks() -> None:
    log, done = unit_and_done()
    assert completion.voucher([*log.events, done], {done.id}, HUMAN, "t") is None
    assert completion.voucher(log.events, set(), HUMAN, "t") is None  # nothing marked


def test_no_command_or_post_may_write_the_mark_or_a_voucher() -> None:
    log, done = unit_and_done()
    with pytest.raises(Invalid, match="import alone"):
        append.check("app", done)
    voucher = completion.voucher([*log.events, done], set(), HUMAN, "t")
    assert voucher is not None and VOUCHER not in WRITABLE
    with pytest.raises(Invalid, match="not a type any command writes"):
        append.check("app", voucher)
    with pytest.raises(Invalid):
        decode(msgspec.json.encode({"events": [{"type": VOUCHER, "project": "app", "payload": {}}]}))


@given(st.integers(0, 2**80 - 1))
def test_the_voucher_comes_right_before_the_first_done_it_names(random_part: int) -> None:
    _, done = unit_and_done()
    first = msgspec.structs.replace(done, id=ids.encode(ids.time_ms(done.id) << 80 | random_part))
    found = completion.voucher([first], set(), HUMAN, "t")
    assert found is not None and ids.decode(found.id) == ids.decode(first.id) - 1
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
    vouched = completion.voucher([close], set(), HUMAN, "t")
    assert vouched is not None and msgspec.json.decode(vouched.payload)["judged"] == [close.id]
    late = make(ids.encode(ids.decode(close.id) + 1), "t", VOUCHER, HUMAN, "app", Vouched((close.id,)))
    assert refused(fold_all([*log.events, close, late]))  # a voucher after it vouches for nothing
    state = fold_all([vouched, *log.events, close])
    assert refused(state) == [] and state.entities[unit].execution == "done"
