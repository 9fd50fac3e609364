"""Context makes only the rows the budget keeps, and what it renders is byte for byte what it
rendered when every row was made first (`tests/support/context_before.py`, the oracle): on
random records, priorities, placements and budgets, on random Superself histories, and on a
hot slice whose short ids are decided by records it left out."""

from __future__ import annotations

import hypothesis.strategies as st
import msgspec
from hypothesis import HealthCheck, given, settings

from service.core.commands.config import WorkspaceConfig
from service.core.events import ids
from service.core.events.events import Blocked, EntityWhy, Event, Placed
from service.core.fold.fold import fold_all
from service.core.fold.hotslice import split
from service.core.fold.state import State
from service.core.projections import context, tokens
from service.core.projections.render import LazyShorts, neighbours, shorts_for
from tests.support import context_before as before
from tests.support.builders import AGENT, Log
from tests.support.strategies import histories
from tests.unit.test_ledger_properties import ledger_histories

TODAY = "2026-11-30"
NOW = "2026-11-30T09:00:00.000Z"
RATES = (0.25, 0.5, 1.0, 4.0)


class Dense(Log):
    """A log whose ids share long prefixes (events a few milliseconds apart, low bits from a
    draw), so short ids need more than the minimum and neighbours decide them."""

    def __init__(self, salts: list[int]) -> None:
        super().__init__()
        self.salts = salts

    def next_id(self) -> str:
        n = len(self.events) + 1
        return ids.encode((self.base + n // 3) << 80 | self.salts[n % len(self.salts)] << 20 | n)


KINDS = ("full", "index", "search", "work", "progress", "proposed", "placed", "blocked", "target", "gone")
records = st.lists(
    st.tuples(
        st.sampled_from(KINDS),
        st.none() | st.sampled_from([0, 10, 20]),
        st.text(alphabet="ab \n", min_size=1, max_size=300).filter(str.strip),
    ),
    max_size=40,
)


def _log(rows: list[tuple[str, int | None, str]], salts: list[int]) -> Log:
    log = Dense(salts)
    made: list[str] = []
    for kind, priority, text in rows:
        exposure = kind if kind in ("full", "index", "search") else "index"
        labels = ("work",) if kind in ("work", "progress", "blocked") else ("note",)
        target = "2026-11-29" if kind == "target" else None
        entity = log.entity(
            text, *labels, proposed=kind == "proposed", exposure=exposure, priority=priority, target=target
        )
        made.append(entity)
        if kind == "progress":
            log.add("entity.started", EntityWhy(entity=entity))
        elif kind == "blocked":
            log.add("entity.blocked", Blocked(entity=entity, on="decision", why=text[:20]))
        elif kind == "placed":
            log.add("entity.placed", Placed(entity=made[0], exposure="full", why="moved"), AGENT)
        elif kind == "gone":
            log.add("entity.retracted", EntityWhy(entity=made[len(made) // 2]))
    return log


def _same(state: State, budget: int, rate: float, **slice_args: object) -> None:
    config = WorkspaceConfig(context_budget=budget, tokens_per_char=rate)
    args = ("app", state, [], config, TODAY, {}, 0)
    old = before.build_context(*args, now=NOW, **slice_args)  # type: ignore[arg-type]
    encode = msgspec.json.encode
    assert encode(context.draft_context(*args, now=NOW, **slice_args).doc()) == encode(old)  # type: ignore[arg-type]
    fresh = context.draft_context(*args, now=NOW, **slice_args)  # type: ignore[arg-type]
    assert encode(fresh.fitted()) == encode(before.fit(old))
    fresh = context.draft_context(*args, now=NOW, **slice_args)  # type: ignore[arg-type]
    assert fresh.render() == before.render_agent(old)
    assert fresh.render(budget * 3, rate) == before.render_agent(old, budget * 3, rate)
    assert context.compose_all(old) == before.compose_all(old)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=records,
    salts=st.lists(st.integers(0, 3), min_size=1, max_size=4),
    budget=st.integers(context.MIN_BUDGET, 3000) | st.just(context.MAX_BUDGET),
    rate=st.sampled_from(RATES),
)
def test_the_rows_made_when_read_render_as_every_row_made_first(
    rows: list[tuple[str, int | None, str]], salts: list[int], budget: int, rate: float
) -> None:
    _same(_log(rows, salts).state(), budget, rate)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=records,
    salts=st.lists(st.integers(0, 3), min_size=1, max_size=4),
    budget=st.integers(context.MIN_BUDGET, 3000),
)
def test_a_hot_slice_renders_as_every_row_made_first(
    rows: list[tuple[str, int | None, str]], salts: list[int], budget: int
) -> None:
    whole = _log(rows, salts).state()
    hot, _, cold = split(whole)
    _same(hot, budget, 0.25, cold=cold, near=neighbours(sorted(whole.entities)))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=histories(max_steps=50), budget=st.integers(context.MIN_BUDGET, 2000))
def test_superself_histories_render_as_every_row_made_first(events: list[Event], budget: int) -> None:
    whole = fold_all(events)
    _same(whole, budget, 0.25)
    hot, _, cold = split(whole)
    _same(hot, budget, 0.25, cold=cold, near=neighbours(sorted(whole.entities)))


@settings(max_examples=200, deadline=None)
@given(
    universe=st.lists(st.text(alphabet="0ab", min_size=1, max_size=12), max_size=40),
    wanted=st.lists(st.text(alphabet="0ab", min_size=1, max_size=12), max_size=10),
    outside=st.lists(st.text(alphabet="0ab", min_size=1, max_size=12), max_size=20),
    minimum=st.integers(1, 4),
)
def test_short_ids_made_one_at_a_time_are_those_made_together(
    universe: list[str], wanted: list[str], outside: list[str], minimum: int
) -> None:
    near = neighbours(sorted({*universe, *outside}))
    together = shorts_for(wanted, [*universe, *near(set(wanted))], minimum)
    lazy = LazyShorts(wanted, universe, near, minimum)
    assert {w: lazy[w] for w in reversed(wanted)} == together
    assert lazy.get("not wanted", "x") == "x"


def test_the_agent_render_of_thousands_of_full_records_makes_only_the_rows_it_weighs() -> None:
    log = Log()
    for n in range(4_000):
        log.entity(f"record {n} " + "word " * 20, "note", exposure="full" if n % 2 else "index")
    state = log.state()
    draft = context.draft_context("app", state, [], WorkspaceConfig(), TODAY, {}, 0)
    text = draft.render()
    assert tokens.estimate(text, 0.25) <= 3000
    assert "more full rows" in text and "more index rows" in text
    made = {key: rows.made for key, rows in draft.rows.items()}
    fit_rows = 3000 / 0.25 / len("- [note] record 0 " + "word " * 20)
    assert made[context.FULL] <= fit_rows + 1, made
    assert made[context.INDEX] <= 1, made  # the full block leaves index rows no room: none is made
    whole = before.build_context("app", state, [], WorkspaceConfig(), TODAY, {}, 0)
    assert text == before.render_agent(whole)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=ledger_histories(), budget=st.integers(context.MIN_BUDGET, 2000))
def test_ledger_records_render_their_marks_as_every_row_made_first(events: list[Event], budget: int) -> None:
    whole = fold_all(events)
    _same(whole, budget, 0.25)
    _same(whole, context.MAX_BUDGET, 0.25)
    hot, _, cold = split(whole)
    _same(hot, budget, 0.25, cold=cold, near=neighbours(sorted(whole.entities)))
