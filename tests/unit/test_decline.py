"""Decline: a person's no to what waits on them. A proposed record is withdrawn with why; a
placement proposed on a record already confirmed is dropped and the record stays where it is;
nothing waiting is refused (wrong-state), as confirm refuses it."""

from __future__ import annotations

import msgspec
import pytest

from service.core.commands import requests as rq
from service.core.commands.commands import Clock
from service.core.commands.config import WorkspaceConfig
from service.core.commands.handle import handle
from service.core.errors import Invalid
from service.core.events.events import EntityWhy, Event, Origin, Placed, payload_of
from service.core.fold.state import Entity
from service.core.projections.views import is_waiting
from tests.support.builders import AGENT, HUMAN, Log

NOW = "2026-11-30T11:00:00.000Z"
AN_AGENT = Origin("agent", True)  # an agent's own writes; `proposed` makes them wait on a person


def run(log: Log, command: rq.AnyCommand, origin: Origin = HUMAN) -> list[Event]:
    """`command` on the log's state; its events appended to the log."""
    events = handle(log.state(), WorkspaceConfig(), Clock(log.next_id, NOW, origin, "app"), command)
    for event in events:
        log.events.append(event)
    return events


def record(log: Log, entity_id: str) -> Entity:
    return log.state().entities[entity_id]


def proposed_placement(log: Log) -> str:
    """A confirmed convention at full; an agent proposes moving it to index."""
    convention = log.entity("events are never edited", "convention", exposure="full", priority=30)
    run(log, rq.Place(record=convention, exposure="index", why="rarely needed", proposed=True), AN_AGENT)
    assert record(log, convention).pending, "the placement waits on a person"
    return convention


def test_a_proposed_record_declined_is_withdrawn_with_why() -> None:
    log = Log()
    idea = log.entity("rewrite it in a weekend", "idea", proposed=True)
    [event] = run(log, rq.Decline(record=idea, why="  too risky  "))
    assert (event.type, msgspec.structs.asdict(payload_of(event))["why"]) == ("entity.retracted", "too risky")
    assert (record(log, idea).status, record(log, idea).closed_why) == ("retracted", "too risky")


def test_a_decline_without_why_says_declined() -> None:
    log = Log()
    idea = log.entity("a proposal", "idea", proposed=True)
    [event] = run(log, rq.Decline(record=idea))
    assert record(log, idea).closed_why == "declined"
    assert event.origin == HUMAN


def test_a_placement_declined_is_dropped_and_the_record_stays_where_it_is() -> None:
    log = Log()
    convention = proposed_placement(log)
    [event] = run(log, rq.Decline(record=convention, why="still needed every session"))
    assert event.type == "entity.declined"
    kept = record(log, convention)
    assert (kept.status, kept.exposure, kept.priority, kept.pending) == ("confirmed", "full", 30, [])
    assert not is_waiting(kept, NOW), "nothing of it waits on a person any more"
    with pytest.raises(Invalid, match="waits on a person") as refused:
        run(log, rq.Confirm(record=convention))
    assert refused.value.code == "wrong-state", "a declined placement can no longer be confirmed"


def test_a_placement_declined_takes_the_demotions_proposed_with_it() -> None:
    log = Log()
    old = log.entity("old convention", "convention", exposure="full", priority=30)
    mover = log.entity("a note", "note", exposure="search")
    run(log, rq.Place(record=mover, exposure="full", why="room", demote=(old,), proposed=True), AN_AGENT)
    assert [p.pair for p in record(log, old).pending] == [mover]
    run(log, rq.Decline(record=mover))
    assert (record(log, mover).exposure, record(log, mover).pending) == ("search", [])
    assert (record(log, old).exposure, record(log, old).pending) == ("full", [])
    assert mover not in log.state().pairs


def test_a_later_proposal_waits_again_after_a_decline() -> None:
    log = Log()
    convention = proposed_placement(log)
    run(log, rq.Decline(record=convention))
    run(log, rq.Place(record=convention, priority=5, proposed=True), AN_AGENT)
    run(log, rq.Confirm(record=convention))
    kept = record(log, convention)
    assert (kept.exposure, kept.priority, kept.pending) == ("full", 5, [])


@pytest.mark.parametrize("answer", ["confirm", "decline"])
def test_a_decline_after_an_answer_is_refused(answer: str) -> None:
    """Two people answer the same proposal at once: the one written second finds nothing waiting."""
    log = Log()
    convention = proposed_placement(log)
    first = rq.Confirm(record=convention) if answer == "confirm" else rq.Decline(record=convention)
    run(log, first)
    settled = record(log, convention).exposure
    before = len(log.events)
    with pytest.raises(Invalid) as refused:
        run(log, rq.Decline(record=convention, why="no"))
    assert refused.value.code == "wrong-state"
    assert str(refused.value) == (
        f"nothing of {convention} waits on a person (it is confirmed): only a proposal is declined"
    )
    assert (len(log.events), record(log, convention).exposure) == (before, settled)


def test_nothing_waiting_is_refused() -> None:
    log = Log()
    confirmed = log.entity("keep the old build", "decision")
    gone = log.entity("an old idea", "idea", proposed=True)
    run(log, rq.Retract(record=gone, why="dropped"))
    for entity_id, status in ((confirmed, "confirmed"), (gone, "retracted")):
        with pytest.raises(Invalid, match=f"it is {status}") as refused:
            run(log, rq.Decline(record=entity_id))
        assert refused.value.code == "wrong-state"


def test_a_decline_names_a_record() -> None:
    with pytest.raises(Invalid) as refused:
        run(Log(), rq.Decline(record="01zzzz"))
    assert refused.value.code == "not-found"


def test_a_posted_decline_folds_as_the_command_writes_it() -> None:
    """`entity.declined` from any writer (a post, a push) drops the record's waiting placements."""
    log = Log()
    convention = log.entity("events are never edited", "convention", exposure="full")
    log.add("entity.placed", Placed(entity=convention, exposure="search", why="unused"), AGENT)
    log.add("entity.declined", EntityWhy(entity=convention, why="used daily"), AGENT)
    kept = record(log, convention)
    assert (kept.exposure, kept.pending, kept.status) == ("full", [], "confirmed")


def test_decline_is_data() -> None:
    assert rq.decode(b'{"command": "decline", "record": "01ab"}') == rq.Decline(record="01ab")
    assert rq.decode(b'{"command": "decline", "record": "01ab", "why": "no"}') == rq.Decline(
        record="01ab", why="no"
    )
    assert rq.log_of(rq.Decline(record="01ab")) == "record"
    assert rq.named(rq.Decline(record="01ab")) == ("01ab",)
