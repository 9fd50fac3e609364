"""Proposals past Superself's expiry stop waiting on a person; the fold stays clock-free.

Superself (`apps/cli/src/model.ts`: `expireProposedDecisions`, `PROPOSAL_EXPIRY_DAYS`;
`objectives.ts`: `deriveGoals`, `openProposals`) left a proposed decision out of "waiting on
you" once it was more than 14 days old, and a work proposal once the day its `expires` names
had passed; both stay proposed. selfhub's views that take `now` from their caller do the
same (`service/core/fold/lapse.py`). The stores below are in Superself's grammar: its lifecycle
fixture (legacy kinds) and entity-era lines in the shapes its verbs wrote.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from service.core.commands.config import WorkspaceConfig
from service.core.events.events import Event, decode_line
from service.core.fold import lapse
from service.core.fold.fold import fold_all
from service.core.fold.state import State
from service.core.projections.context import build_context, compose_all
from service.core.projections.status import build_status, render_status, waiting_count, work_counts
from service.core.projections.views import is_waiting

LIFECYCLE = Path(__file__).resolve().parents[1] / "fixtures" / "superself-legacy" / "lifecycle"
GRAPHQL = "01kyz0vq4e0000000000000000"  # decision.proposed "adopt graphql", 2026-08-01T16:00:07.310Z
CACHE = "01kyz0wvhf0000000000000000"  # work.proposed "warm the cache", expires 2099-01-01
MADE = "2026-08-01T16:00:07.310Z"
TODAY = "2026-12-01"


def lifecycle() -> State:
    lines = (LIFECYCLE / "store" / "projects" / "demo" / "log.jsonl").read_bytes().splitlines()
    return fold_all(decode_line(line) for line in lines if line.strip())


def later(instant: str, **delta: float) -> str:
    moment = dt.datetime.fromisoformat(instant) + dt.timedelta(**delta)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def waiting_ids(state: State, now: str | None) -> set[str]:
    return {e.id for e in state.entities.values() if is_waiting(e, now)}


def test_a_proposed_decision_waits_fourteen_days_to_the_millisecond() -> None:
    state = lifecycle()
    fourteen = later(MADE, days=14)
    assert GRAPHQL in waiting_ids(state, fourteen)  # Superself: age > 14 days, not >=
    assert GRAPHQL not in waiting_ids(state, later(fourteen, milliseconds=1))
    assert state.entities[GRAPHQL].status == "proposed"  # still a proposal: it can be confirmed


def test_a_work_proposal_waits_through_the_day_it_expires() -> None:
    state = lifecycle()
    assert CACHE in waiting_ids(state, "2099-01-01T23:59:59.999Z")
    assert CACHE not in waiting_ids(state, "2099-01-02T00:00:00.000Z")


def test_status_counts_only_what_still_waits_and_says_how_many_lapsed() -> None:
    state = lifecycle()
    before, after = MADE, later(MADE, days=15)
    assert waiting_count(state, after) == waiting_count(state, before) - 1
    doc = build_status("demo", state, {}, [], TODAY, after)
    assert (doc.waiting, doc.lapsed) == (waiting_count(state, after), 1)
    assert "lapsed: 1 proposal past expiry, still proposed" in render_status(doc)
    assert build_status("demo", state, {}, [], TODAY).lapsed == 0  # no clock: nothing lapses


def test_context_leaves_a_lapsed_proposal_out_of_waiting_and_says_so() -> None:
    state = lifecycle()

    def waiting_section(now: str) -> str:
        doc = build_context("demo", state, [], WorkspaceConfig(), TODAY, {}, 0, now=now)
        text = compose_all(doc)
        return text.split("## Waiting on you")[1].split("\n## ")[0]

    assert "adopt graphql" in waiting_section(MADE)
    section = waiting_section(later(MADE, days=15))
    assert "adopt graphql" not in section
    assert "1 proposal past expiry left out (still proposed)" in section


def line(event_id: str, event_type: str, payload: dict[str, Any], ts: str, actor: str = "agent") -> Event:
    """One event as Superself's entity-era verbs wrote it."""
    origin = {"actor": actor, "confirmed": actor == "human"}
    raw = {"id": event_id, "ts": ts, "type": event_type, "origin": origin, "project": "app"}
    raw["payload"] = payload
    return decode_line(json.dumps(raw).encode())


def entity(name: str, labels: list[str], **extra: Any) -> dict[str, Any]:
    made = {"entity": name, "text": f"the {name}", "labels": labels, "links": [], "criteria": []}
    return made | {"scope": "project"} | extra


ERA_MADE = "2026-09-01T09:00:00.000Z"


def entity_era() -> State:
    """`decide --proposed`, `work propose … --expires`, a proposed objective and a
    free-labelled proposal, all on one day."""
    brief = {"value": "finds the hot path", "confidence": "high", "expires": "2026-09-10"}
    made = [
        entity("e-dec01", ["decision"], exposure="index"),
        entity("w-prop1", ["work"], **brief),
        entity("o-obj01", ["objective"]),
        entity("e-note1", ["note"]),
    ]
    return fold_all(
        line(f"01kz9b0p00000000000000000{n}", "entity.proposed", payload, ERA_MADE)
        for n, payload in enumerate(made, 1)
    )


def test_entity_era_proposals_lapse_as_superself_s_did() -> None:
    state = entity_era()
    assert waiting_ids(state, ERA_MADE) == {"e-dec01", "w-prop1", "o-obj01", "e-note1"}
    assert waiting_ids(state, "2026-09-11T00:00:00.000Z") == {"e-dec01", "o-obj01", "e-note1"}
    # a proposed objective and a free-labelled proposal never lapse: Superself aged neither
    assert waiting_ids(state, "2027-09-01T00:00:00.000Z") == {"o-obj01", "e-note1"}


def test_the_fold_reads_no_clock() -> None:
    state = entity_era()
    assert state.entities["e-dec01"].proposed_at == ERA_MADE
    assert state.entities["w-prop1"].expires == "2026-09-10"
    assert msgspec.json.encode(state) == msgspec.json.encode(entity_era())


@given(st.integers(0, 40 * 86_400_000), st.integers(0, 40 * 86_400_000))
def test_a_lapse_is_never_taken_back_by_a_later_instant(first: int, second: int) -> None:
    e = entity_era().entities["e-dec01"]
    early, late = sorted((first, second))
    if lapse.lapsed(e, later(ERA_MADE, milliseconds=early)):
        assert lapse.lapsed(e, later(ERA_MADE, milliseconds=late))
    assert lapse.lapsed(e, later(ERA_MADE, milliseconds=late)) == (late > 14 * 86_400_000)


# --- a unit confirmed, then withdrawn: Superself's `confirmedOnce` -----------------------------


def test_a_unit_withdrawn_after_it_was_confirmed_counts_by_its_working_state() -> None:
    """Superself's `projectWork` keeps every work entity confirmed once in `model.works`,
    whatever its status since, and `countLine` counts it by `workStatusOf`: a unit started,
    then retracted, is still active; one superseded after confirmation is still next. A
    proposal declined before any confirmation is never work."""
    at = "2026-09-02T10:00:00.000Z"
    replaced = {"entity": "w-old01", "successor": "w-new01"}
    state = fold_all(
        [
            line("01kz9b0p000000000000000010", "entity.confirmed", entity("w-run01", ["work"]), at, "human"),
            line("01kz9b0p000000000000000011", "entity.started", {"entity": "w-run01"}, at),
            line("01kz9b0p000000000000000012", "entity.retracted", {"entity": "w-run01", "why": "moot"}, at),
            line("01kz9b0p000000000000000013", "entity.proposed", entity("w-old01", ["work"]), at),
            line("01kz9b0p000000000000000014", "entity.confirmed", {"entity": "w-old01"}, at, "human"),
            line("01kz9b0p000000000000000015", "entity.confirmed", entity("w-new01", ["work"]), at, "human"),
            line("01kz9b0p000000000000000016", "entity.superseded", replaced, at),
            line("01kz9b0p000000000000000017", "entity.proposed", entity("w-no001", ["work"]), at),
            line("01kz9b0p000000000000000018", "entity.retracted", {"entity": "w-no001"}, at),
        ]
    )  # fmt: skip
    assert state.entities["w-run01"].status == "retracted"
    counts = work_counts(state)
    assert (counts.active, counts.blocked, counts.next, counts.done, counts.retired) == (1, 0, 2, 0, 0)
