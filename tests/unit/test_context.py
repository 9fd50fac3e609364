"""Context: collect, order, render, anchor derived state, and keep to the token budget."""

from __future__ import annotations

import re

import msgspec

from service.core.commands.config import WorkspaceConfig
from service.core.events.events import (
    Blocked,
    EntityWhy,
    Placed,
    RunStarted,
)
from service.core.fold.state import Project
from service.core.projections import tokens
from service.core.projections.context import ContextDoc, build_context, compose_all, render_agent
from service.core.projections.overview import overview, render_overview
from tests.support.builders import AGENT, Log

TODAY = "2026-12-01"


def context(log: Log, **kw: object) -> ContextDoc:
    args: dict[str, object] = {
        "shared": [],
        "config": WorkspaceConfig(),
        "today": TODAY,
        "runs": {},
        "quarantined": 0,
    }
    args.update(kw)
    return build_context(log.project, log.state(), **args)  # type: ignore[arg-type]


def section(text: str, title: str) -> list[str]:
    """The lines of one `## title` section (without blanks)."""
    match = re.search(rf"^## {title}\n\n(.*?)(?:\n\n|\Z)", text, re.S | re.M)
    return match.group(1).splitlines() if match else []


def test_full_block_in_priority_then_recency_order_before_derived_state() -> None:
    log = Log()
    log.entity("tabs", "convention", exposure="full", priority=30)
    log.entity("the goal", "goal", exposure="full", priority=0)
    log.entity("no spaces", "convention", exposure="full", priority=30)
    log.entity("a decision", "decision", exposure="index", priority=40, why="because")
    log.entity("hidden", "idea")
    text = render_agent(context(log, description="what it is"))
    assert text.startswith(
        "# app\n\nwhat it is\n\n- [goal] the goal\n- [convention] no spaces\n- [convention] tabs\n"
    )
    assert section(text, "Index") == [
        "- [decision] a decision — because",
        "- 1 entity at search exposure; run `self search --project app`",
    ]
    assert "hidden" not in text


def test_proposals_wait_with_the_exact_confirm_command() -> None:
    log = Log()
    decision = log.entity("add a cache", "decision", proposed=True, exposure="index", priority=40)
    note = log.entity("a proposed convention", "convention", proposed=True, exposure="full")
    doc = context(log)
    shorts = {r.id: r.short for s in doc.sections for r in s.rows if r.id}
    text = render_agent(doc)
    assert section(text, "Waiting on you") == [
        f"- proposed [decision] add a cache (confirm with `self decide confirm {shorts[decision]}`)",
        f"- proposed [convention] a proposed convention (confirm with `self state confirm {shorts[note]}`)",
    ]
    assert shorts[decision] == decision[:8]
    assert "## Index" not in text  # a proposal is not rendered as current truth
    assert doc.counts["waiting"] == 2


def test_pending_placement_waits_while_the_record_keeps_its_placement() -> None:
    log = Log()
    e = log.entity("events are never edited", "convention", exposure="full", priority=30)
    log.add("entity.placed", Placed(entity=e, exposure="index", why="rarely needed"), AGENT)
    text = render_agent(context(log))
    assert "- [convention] events are never edited\n" in text
    waiting = section(text, "Waiting on you")
    assert len(waiting) == 1
    assert waiting[0].startswith("- placement [convention] events are never edited → index (rarely needed)")
    assert waiting[0].endswith(f"(confirm with `self state confirm {e[:8]}`)")


def test_paired_demotion_confirms_with_the_proposed_add() -> None:
    log = Log()
    old = log.entity("old convention", "convention", exposure="full", priority=30)
    new = log.entity("new convention", "convention", proposed=True, exposure="full", priority=30)
    log.add("entity.placed", Placed(entity=old, exposure="index", why="room", pair=new), AGENT)
    waiting = section(render_agent(context(log)), "Waiting on you")
    assert any(
        w.startswith("- placement [convention] old convention → index")
        and w.endswith(f"`self state confirm {new[:8]}`)")
        for w in waiting
    )


def test_work_in_progress_full_rows_and_other_open_work_counted() -> None:
    log = Log()
    running = log.entity("write the merge", "work")
    log.add("entity.started", EntityWhy(entity=running))
    log.add("work.run-started", RunStarted(work=running))
    blocked = log.entity("write the docs", "work")
    log.add("entity.blocked", Blocked(entity=blocked, on="dependency"))
    log.entity("polish", "work")
    log.entity("searchable", "note")
    doc = context(log, runs={running: "running"})
    text = render_agent(doc)
    assert section(text, "Work in progress") == [
        "- [work] write the merge — process running",
        "- 2 more open work items; run `self work list --project app`",
    ]
    assert "1 entity at search exposure" in text  # open work is not counted twice
    assert doc.counts["open_work"] == 2 and doc.counts["progress"] == 1


def test_deadlines_sorted_and_overdue_marked() -> None:
    log = Log()
    log.entity("ship the beta", "objective", exposure="full", priority=10, target="2099-03-31")
    log.entity("ship the alpha", "objective", exposure="full", priority=10, target="2026-11-01")
    demo = log.entity("demo", "milestone", exposure="index", target=TODAY)
    doc = context(log)
    rows = next(s for s in doc.sections if s.key == "deadlines").rows
    assert (rows[1].id, rows[1].short) == (demo, demo[:8])
    assert section(render_agent(doc), "Deadlines") == [
        "- 2026-11-01 (overdue): [objective] ship the alpha",
        f"- {TODAY} (due today): [milestone] demo",
        "- 2099-03-31: [objective] ship the beta",
    ]


def test_health_counts_signals_and_quarantined_lines() -> None:
    log = Log()
    log.entity("x", "note", exposure="index")
    log.add("entity.done", EntityWhy(entity="nothing-here"))
    text = render_agent(context(log, quarantined=2))
    assert section(text, "Health") == ["- 3 health signals; run `self status --project app`"]
    assert "## Health" not in render_agent(context(Log()))


def test_shared_workspace_records_render_once_in_order() -> None:
    log = Log()
    log.entity("project goal", "goal", exposure="full", priority=0)
    other = Log("web", base=1_700_000_000_000)
    rule = other.entity("all repos use main", "convention", exposure="full", priority=5, scope="workspace")
    waiting = other.entity("share the linter", "convention", proposed=True, scope="workspace")
    shared = list(other.state().entities.values())
    text = render_agent(context(log, shared=shared))
    assert "- [goal] project goal\n- [convention] all repos use main\n" in text
    assert f"`self state confirm {waiting[:8]} --project web`" in text
    assert rule not in text


def test_context_doc_is_json() -> None:
    log = Log()
    log.entity("goal", "goal", exposure="full", priority=0)
    doc = context(log)
    data = msgspec.json.decode(msgspec.json.encode(doc))
    assert data["project"] == "app"
    assert data["sections"][0]["rows"][0]["text"] == "- [goal] goal"
    assert data["counts"]["full"] == 1


def test_budget_drops_index_rows_from_the_bottom_with_a_pointer() -> None:
    log = Log()
    log.entity("the goal", "goal", exposure="full", priority=0)
    for n in range(300):
        log.entity(
            f"index entity number {n:03d} with some descriptive words",
            "note",
            exposure="index",
            priority=50,
        )
    log.entity("a searchable thing", "idea")
    doc = context(log)
    text = render_agent(doc, 3000, 0.25)
    assert tokens.estimate(text, 0.25) <= 3000
    assert len(text) * 0.25 <= 3000
    index = section(text, "Index")
    kept = [line for line in index if line.startswith("- [note]")]
    assert 0 < len(kept) < 300
    # most recent first, so the kept rows are the newest and the oldest are dropped
    assert kept == [
        f"- [note] index entity number {n:03d} with some descriptive words"
        for n in range(299, 299 - len(kept), -1)
    ]
    assert index[len(kept)] == f"- {300 - len(kept)} more index rows; run `self state list --project app`"
    assert index[-1] == "- 1 entity at search exposure; run `self search --project app`"
    assert "- [goal] the goal" in text
    # the budget is used, not wasted: one more row would not fit
    assert tokens.estimate(text, 0.25) > 3000 - 30


def test_budget_then_drops_derived_rows_but_never_the_header() -> None:
    log = Log()
    log.entity("the goal", "goal", exposure="full", priority=0)
    for n in range(40):
        log.entity(f"proposal {n} " + "x" * 60, "decision", proposed=True)
    log.entity("one index row", "note", exposure="index")
    text = render_agent(context(log, description="about it"), 200, 0.25)
    assert tokens.estimate(text, 0.25) <= 200
    assert text.startswith("# app\n\nabout it\n\n- [goal] the goal\n")
    assert "- 1 more index row; run `self state list --project app`" in text
    waiting = section(text, "Waiting on you")
    assert waiting[-1].startswith("- ") and "more items waiting on you" in waiting[-1]


def test_budget_generous_renders_everything_and_tty_bypasses_it() -> None:
    log = Log()
    for n in range(50):
        log.entity(f"row {n}", "note", exposure="index")
    doc = context(log)
    assert render_agent(doc, 100_000, 0.25) == compose_all(doc)
    assert "more index rows" in render_agent(doc, 100, 0.25)

    from cli.tty import render_markdown

    plain = render_markdown(compose_all(doc), width=80, color=False)
    assert "row 0" in plain and "row 49" in plain and "\x1b[" not in plain


def test_overview_goal_counts_health_and_archived() -> None:
    app = Log()
    app.entity("teams share state", "goal", exposure="full", priority=0)
    unit = app.entity("write it", "work")
    app.add("entity.started", EntityWhy(entity=unit))
    app.entity("late", "objective", target="2020-01-01")
    app.add("entity.done", EntityWhy(entity="missing"))
    old = Log("old")
    projects = [
        (Project("app", "01", "a sample app"), app.state()),
        (Project("old", "02", archived=True), old.state()),
    ]
    doc = overview(projects, TODAY)
    assert doc.projects[0].work.active == 1 and doc.projects[0].overdue == 1
    text = render_overview(doc)
    assert (
        "- app — goal: teams share state; work: 1 active, 0 blocked, 0 next, 0 done; "
        "health: 1 signal; 1 overdue"
    ) in text
    assert "- old (archived) — goal: no goal set;" in text
    assert "no projects registered yet" in render_overview(overview([], TODAY))
    flagged = render_overview(overview(projects, TODAY, ["project app was registered again"]))
    assert "workspace health: 1 signal\n- project app was registered again" in flagged
    assert "workspace health" not in text


def test_render_defaults_to_the_workspace_budget() -> None:
    log = Log()
    for n in range(50):
        log.entity(f"row {n} with a few words", "note", exposure="index")
    doc = context(log, config=WorkspaceConfig(context_budget=120, tokens_per_char=0.5))
    text = render_agent(doc)
    assert tokens.estimate(text, 0.5) <= 120
    assert "more index rows; run `self state list --project app`" in text
    assert render_agent(doc, 100_000) == compose_all(doc)


def test_terminal_render_imports_rich_only_when_called() -> None:
    import subprocess
    import sys
    from pathlib import Path

    code = "import sys, cli.tty; assert 'rich' not in sys.modules"
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root, env={"PYTHONPATH": str(root)})
