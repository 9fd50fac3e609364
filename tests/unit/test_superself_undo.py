"""Superself's undo: `entity.restored` with `refs.annuls` takes back the event it names.

Superself's fold (`apps/cli/src/entities.ts`, `collectAnnulled` and the skips in
`applyRetractions`, `applyLinks`, `applyExecutions`, `createdLinks`) skips an annulled
withdrawal, retirement or link, and an annulled creation keeps its record but not the
supersessions it made.
"""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from service.core.events.events import Blocked, EntityWhy, Link, Linked
from service.core.fold.state import State
from tests.support.builders import Log


def undo(log: Log, entity: str, annulled: str) -> str:
    eid = log.add("entity.restored", EntityWhy(entity=entity, why="a mistake"))
    log.events[-1] = msgspec.structs.replace(log.events[-1], refs={"annuls": annulled})
    return eid


def signals(state: State) -> list[str]:
    return [s.kind for s in state.signals]


def test_an_undone_withdrawal_leaves_the_record_standing() -> None:
    log = Log()
    record = log.entity("keep logs a week")
    withdrawal = log.add("entity.retracted", EntityWhy(entity=record, why="wrong call"))
    undo(log, record, withdrawal)
    state = log.state()
    assert (state.entities[record].status, state.entities[record].closed_why) == ("confirmed", None)
    assert signals(state) == []


def test_an_undone_withdrawal_of_a_ledger_claim_makes_it_current_again() -> None:
    log = Log()
    claim = log.entity("the cache is warm", "claim")
    withdrawal = log.add("entity.retracted", EntityWhy(entity=claim))
    undo(log, claim, withdrawal)
    fact = log.state().ledger[claim]
    assert (fact.current, fact.retracted) == (True, False)


def test_an_undone_supersession_restores_every_record_it_replaced() -> None:
    log = Log()
    first, second = log.entity("store in json"), log.entity("store in yaml")
    links = (Link("supersedes", first), Link("supersedes", second))
    successor = log.entity("store in sqlite", links=links)
    undo(log, first, successor)
    state = log.state()
    assert [state.entities[i].status for i in (first, second, successor)] == ["confirmed"] * 3
    assert state.entities[first].superseded_by is None and state.entities[successor].supersedes == []


def test_an_undone_retirement_reopens_the_unit_as_it_was() -> None:
    log = Log()
    unit = log.entity("port the docs", "work")
    log.add("entity.blocked", Blocked(entity=unit, on="a review"))
    retirement = log.add("entity.retired", EntityWhy(entity=unit, why="not needed"))
    undo(log, unit, retirement)
    entity = log.state().entities[unit]
    assert (entity.execution, entity.closed_why, entity.blocked_on) == ("blocked", None, "a review")


def test_an_undone_link_removes_the_edge() -> None:
    log = Log()
    claim, other = log.entity("a claim", "claim"), log.entity("the ground", "claim")
    link = log.add("entity.linked", Linked(entity=claim, link=Link("supports", other)))
    undo(log, claim, link)
    state = log.state()
    assert state.entities[claim].links == [] and state.ledger[claim].supports == ()


def test_an_undo_read_before_the_event_it_names_skips_that_event() -> None:
    """A writer whose clock ran behind: the restoration sorts first, the withdrawal after."""
    log = Log()
    record = log.entity("keep logs a week")
    early = undo(log, record, "placeholder")
    withdrawal = log.add("entity.retracted", EntityWhy(entity=record))
    log.events[-2] = msgspec.structs.replace(log.events[-2], refs={"annuls": withdrawal})
    state = log.state()
    assert early < withdrawal and state.entities[record].status == "confirmed" and state.annulled == []


def test_an_undo_of_what_is_not_the_records_last_transition_is_a_signal() -> None:
    log = Log()
    record = log.entity("keep logs a week")
    undo(log, record, log.add("entity.retracted", EntityWhy(entity=record)))
    again = log.add("entity.retracted", EntityWhy(entity=record, why="now for real"))
    undo(log, record, log.events[-3].id)  # the first undo's own withdrawal, already taken back
    state = log.state()
    assert state.entities[record].status == "retracted" and again
    assert signals(state) == ["undo-not-applied"]


def test_a_restore_without_annuls_keeps_selfhubs_meaning() -> None:
    log = Log()
    unit = log.entity("ship it", "work")
    log.done(unit)
    log.add("entity.restored", EntityWhy(entity=unit))
    assert log.state().entities[unit].execution is None


@given(
    st.lists(st.tuples(st.sampled_from(["retract", "retire", "link"]), st.booleans()), min_size=1, max_size=8)
)
@settings(max_examples=60, deadline=None)
def test_an_undo_folds_as_if_the_event_it_names_were_never_written(steps: list[tuple[str, bool]]) -> None:
    """Superself's rule: the annulled event is skipped. Each step acts on a record of its own
    (a withdrawal, a retirement or a link) and is undone or not."""
    with_undo, without = Log(), Log()
    for log in (with_undo, without):
        log.entity("the ground", "claim")
    ground = with_undo.events[0].id
    for kind, undone in steps:
        records = [log.entity(f"record {kind}", "work") for log in (with_undo, without)]
        assert records[0] == records[1]
        record = records[0]
        if kind == "retract":
            event = with_undo.add("entity.retracted", EntityWhy(entity=record))
        elif kind == "retire":
            event = with_undo.add("entity.retired", EntityWhy(entity=record))
        else:
            event = with_undo.add("entity.linked", Linked(entity=record, link=Link("relates", ground)))
        if undone:
            undo(with_undo, record, event)
        else:
            without.events.append(with_undo.events[-1])
        while len(without.events) < len(with_undo.events):  # keep ids in step
            without.add("entity.unknown-kind", EntityWhy(entity=record))
    mine, theirs = with_undo.state(), without.state()
    for ident, entity in theirs.entities.items():
        other = mine.entities[ident]
        assert (other.status, other.execution, other.links) == (entity.status, entity.execution, entity.links)
    assert [s.kind for s in mine.signals] == []
