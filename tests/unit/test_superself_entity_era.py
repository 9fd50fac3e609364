"""A store Superself wrote after its entity cutover folds as Superself folded it.

`tests/fixtures/superself-legacy/entity-era/` was written by Superself's own CLI (see the
README there); `expected/` holds what it printed for the store. Each test names the rule
of Superself's fold (`apps/cli/src/entities.ts`) it follows.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from service.core.events.events import Event, decode_line
from service.core.fold.fold import fold_all
from service.core.fold.state import State, shared_with
from service.core.ledger import completion
from service.core.projections.context import collect
from tests.support.builders import HUMAN

ERA = Path(__file__).resolve().parents[1] / "fixtures" / "superself-legacy" / "entity-era"
LOG = ERA / "store" / "projects" / "app" / "log.jsonl"


def imported(event: Event) -> Event:
    """The event as `self import superself` stores it."""
    refs = {**(event.refs or {}), completion.IMPORTED: completion.SUPERSELF}
    return msgspec.structs.replace(event, refs=refs)


def events(*, stamped: bool) -> list[Event]:
    """The log's events; `stamped`: as the importer writes them, marked, with its vouchers."""
    out = []
    for line in LOG.read_bytes().splitlines():
        if not line.strip():
            continue
        event = decode_line(line)
        out.append(imported(event) if stamped else event)
    return out + (completion.vouchers(out, set(), HUMAN, "2026-12-01T00:00:00.000Z") if stamped else [])


@pytest.fixture(scope="module")
def era() -> State:
    return fold_all(events(stamped=True))


def done_refusals(state: State) -> list[str]:
    return [s.entity or "" for s in state.signals if s.kind == "done-refused"]


def test_reached_milestones_and_objective_are_done_as_superself_read_them(era: State) -> None:
    """`milestone reach` and `objective close --as reached` wrote `entity.done` with no
    evidence; Superself's fold applied every done (its verbs held the gate)."""
    assert {era.entities[i].execution for i in ("m-9hcf7", "m-f3w89", "o-j69b4")} == {"done"}
    assert done_refusals(era) == []


def test_the_gate_still_refuses_an_evidence_free_done_not_imported() -> None:
    state = fold_all(events(stamped=False))
    assert sorted(done_refusals(state)) == ["m-9hcf7", "m-f3w89", "o-j69b4"]
    assert state.entities["m-9hcf7"].execution is None


def live_ids(state: State) -> set[str]:
    return {
        e.id
        for e in state.entities.values()
        if e.status in ("proposed", "confirmed") and e.execution not in ("done", "retired")
    }


def test_live_records_are_those_superself_listed(era: State) -> None:
    printed = (ERA / "expected" / "state-list.txt").read_text().splitlines()
    home = {e.id for e in collect(era, [])}
    assert live_ids(era) & home == {line.split()[0] for line in printed[:-1]}


def test_fixture_holds_what_the_rules_turn_on() -> None:
    types = [json.loads(line)["type"] for line in LOG.read_text().splitlines()]
    assert types.count("entity.done") >= 4 and "entity.restored" in types


def test_a_scope_naming_another_project_renders_there(era: State) -> None:
    """`state add --scope other` in app's log: Superself rendered it in `other`, not in app."""
    lint = next(e for e in era.entities.values() if e.text == "shared lint rules")
    assert lint.scope == "other" and lint.live
    assert shared_with("other", lint) and not shared_with("app", lint)
    assert lint not in collect(era, [])
