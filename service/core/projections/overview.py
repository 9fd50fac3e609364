"""Context outside a project: the workspace overview — each registered project's goal, work
counts, health-signal and overdue counts, and the workspace log's own signals — and its text
within a token budget."""

from __future__ import annotations

import msgspec

from service.core.commands.config import TOKENS_PER_CHAR
from service.core.fold.state import Project, State
from service.core.projections.render import one_line, plural, pointer
from service.core.projections.status import WorkCounts, current_goal, deadlines, work_counts, work_text
from service.core.projections.tokens import estimate, most_that_fit, within


class ProjectLine(msgspec.Struct, frozen=True):
    slug: str
    description: str | None
    archived: bool
    goal: str | None
    work: WorkCounts
    health: int
    overdue: int


class OverviewDoc(msgspec.Struct):
    today: str
    projects: list[ProjectLine]
    signals: list[str] = msgspec.field(default_factory=list)  # the workspace log's own


def overview(
    projects: list[tuple[Project, State]], today: str, signals: list[str] | None = None
) -> OverviewDoc:
    """Each registered project's goal, work counts, health-signal and overdue counts, and the
    health signals of the workspace log itself."""
    lines = []
    for project, state in projects:
        goal = current_goal(state)
        overdue = sum(d.overdue for d in deadlines(state.entities.values(), today))
        lines.append(
            ProjectLine(
                slug=project.slug,
                description=project.description,
                archived=project.archived,
                goal=goal.text if goal else None,
                work=work_counts(state),
                health=len(state.signals),
                overdue=overdue,
            )
        )
    return OverviewDoc(today, lines, list(signals or ()))


def render_overview(doc: OverviewDoc, budget: int | None = None, per_char: float = TOKENS_PER_CHAR) -> str:
    """Context outside a registered project: one line per project, archived ones marked;
    within `budget` tokens when given (the projects that do not fit are counted in a pointer)."""
    rows = [_project_line(p) for p in doc.projects]
    if budget is None:
        return _overview_text(rows, 0, doc.signals)

    def text(n: int) -> str:
        return _overview_text(rows[:n], len(rows) - n, doc.signals)

    kept = most_that_fit(lambda n: estimate(text(n), per_char) <= budget, len(rows))
    return within(text(kept), budget, per_char)


def _project_line(p: ProjectLine) -> str:
    mark = " (archived)" if p.archived else ""
    goal = one_line(p.goal, 100) if p.goal else "no goal set"
    extra = f"; {p.overdue} overdue" if p.overdue else ""
    return (
        f"- {p.slug}{mark} — goal: {goal}; work: {work_text(p.work)}; "
        f"health: {plural(p.health, 'signal')}{extra}"
    )


def _overview_text(rows: list[str], left_out: int, signals: list[str]) -> str:
    lines = ["# workspace", "", *rows]
    if left_out:
        lines.append(pointer(f"{plural(left_out, 'more project')}", "self project list"))
    if signals:
        lines += ["", f"workspace health: {plural(len(signals), 'signal')}"]
        lines += [f"- {one_line(detail, 200)}" for detail in signals]
    if not rows and not left_out:
        lines.append(pointer("no projects registered yet", "self project add SLUG"))
    else:
        lines += ["", pointer("one project's context", "self context --project SLUG")]
    return "\n".join(lines) + "\n"
