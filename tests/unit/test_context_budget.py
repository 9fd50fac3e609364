"""Every agent render and its JSON document keep to the budget, whatever the records hold: a
record too long for the budget is cut with a marker naming the command that shows it whole,
the header and pointers count, and a budget outside the allowed range is refused."""

from __future__ import annotations

import hypothesis.strategies as st
import msgspec
import pytest
from hypothesis import given, settings

from service.core.commands.config import WorkspaceConfig
from service.core.errors import Invalid
from service.core.events.events import EntityWhy
from service.core.projections import tokens
from service.core.projections.context import (
    MAX_BUDGET,
    MIN_BUDGET,
    build_context,
    check_budget,
    fit,
    render_agent,
)
from tests.support.builders import Log

TODAY = "2026-12-01"
RATES = (0.25, 0.5, 1.0, 4.0)


def _doc(log: Log, budget: int = 3000, rate: float = 0.25, description: str | None = None):  # type: ignore[no-untyped-def]
    config = WorkspaceConfig(context_budget=budget, tokens_per_char=rate)
    return build_context(log.project, log.state(), [], config, TODAY, {}, 0, description=description)


def _huge_work(log: Log, size: int) -> str:
    unit = log.entity("w" * size, "work")
    log.add("entity.started", EntityWhy(entity=unit))
    return unit


def _row_chars(doc: object) -> int:
    return sum(len(r.text) for s in doc.sections for r in s.rows)  # type: ignore[attr-defined]


@pytest.mark.parametrize("rate", RATES)
def test_one_huge_record_is_cut_to_the_budget_with_a_marker(rate: float) -> None:
    log = Log()
    unit = _huge_work(log, 1_000_000)
    doc = _doc(log, rate=rate)
    text = render_agent(doc, MIN_BUDGET, rate)
    assert tokens.estimate(text, rate) <= MIN_BUDGET, text
    if rate <= 0.5:  # room for the marker: the row stays, cut, and says how to see it whole
        assert "- [work] www" in text and "cut to fit" in text and f"self state show {unit}" in text, text
    if rate <= 0.25:
        assert "w" * 100 in text, text
    fitted = fit(doc, MIN_BUDGET, rate)
    assert len(msgspec.json.encode(fitted)) < 4 * MIN_BUDGET / rate + 2000
    assert _row_chars(fitted) <= MIN_BUDGET / rate


def test_a_long_description_and_many_pointers_count_against_the_budget() -> None:
    log = Log()
    for n in range(30):
        log.entity(f"proposal {n}", "decision", proposed=True)
        log.entity(f"note {n}", "note", exposure="index")
        log.entity(f"idea {n}", "idea")
    doc = _doc(log, description="d" * 5000)
    for rate in RATES:
        text = render_agent(doc, MIN_BUDGET, rate)
        assert tokens.estimate(text, rate) <= MIN_BUDGET, (rate, text)


texts = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=3000).filter(str.strip)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(texts, st.sampled_from(["full", "index", "search", "progress", "proposed"])), max_size=12
    ),
    budget=st.integers(MIN_BUDGET, 2000),
    rate=st.sampled_from(RATES),
    description=st.none() | texts,
)
def test_any_render_keeps_to_any_allowed_budget(
    rows: list[tuple[str, str]], budget: int, rate: float, description: str | None
) -> None:
    log = Log()
    for text, kind in rows:
        if kind == "progress":
            unit = log.entity(text, "work")
            log.add("entity.started", EntityWhy(entity=unit))
        elif kind == "proposed":
            log.entity(text, "decision", proposed=True)
        else:
            log.entity(text, "note", exposure=kind)
    doc = _doc(log, description=description)
    text = render_agent(doc, budget, rate)
    assert tokens.estimate(text, rate) <= budget
    assert text.startswith(f"# {log.project}")
    assert _row_chars(fit(doc, budget, rate)) <= budget / rate
    if tokens.estimate(render_agent(doc, MAX_BUDGET, rate), rate) <= budget:
        assert text == render_agent(doc, MAX_BUDGET, rate), "a render that fits was changed"


@pytest.mark.parametrize("budget", [-1, 0, 10, MIN_BUDGET - 1, MAX_BUDGET + 1])
def test_a_budget_outside_the_range_is_refused_naming_it(budget: int) -> None:
    with pytest.raises(Invalid) as caught:
        check_budget(budget)
    assert f"{MIN_BUDGET} to {MAX_BUDGET}" in str(caught.value)
    assert check_budget(MIN_BUDGET) == MIN_BUDGET and check_budget(MAX_BUDGET) == MAX_BUDGET


def test_the_workspace_overview_keeps_to_the_budget() -> None:
    from service.core.fold.state import Project
    from service.core.projections.overview import overview, render_overview

    projects = [(Project(f"p{n:03d}", "01", "d" * 300), Log(f"p{n:03d}").state()) for n in range(300)]
    doc = overview(projects, TODAY)
    whole = render_overview(doc)
    assert "p299" in whole
    for rate in RATES:
        text = render_overview(doc, MIN_BUDGET, rate)
        assert tokens.estimate(text, rate) <= MIN_BUDGET, (rate, text)
        assert text.startswith("# workspace")
    text = render_overview(doc, 1000, 0.25)
    assert "- p000 " in text and "p299" not in text
    assert "more projects; run `self project list`" in text
    assert render_overview(doc, MAX_BUDGET, 0.25) == whole
