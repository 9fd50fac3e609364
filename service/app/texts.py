"""The text renders of the read documents (`service/app/queries.py`), for a terminal or an
agent; each delegates to the model's render of that document."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from service.app.queries import event_subject

if TYPE_CHECKING:
    from service.app.queries import Context, FoldReport, Records, Row
    from service.model.context import OverviewDoc
    from service.model.status import StatusDoc


def context(read: Context, agent: bool) -> str:
    """The agent render within the budget, else the whole document as terminal markdown."""
    from service.model import context as model

    if not isinstance(read.doc, model.ContextDoc):
        return overview(read.doc, read.budget, read.per_char)
    if agent:
        return model.render_agent(read.doc, read.budget, read.per_char)
    return model.compose_all(read.doc)


def overview(doc: OverviewDoc, budget: int | None = None, per_char: float = 0.25) -> str:
    from service.model.context import render_overview

    return render_overview(doc, budget, per_char)


def status(doc: StatusDoc | OverviewDoc) -> str:
    from service.model import status as model

    return model.render_status(doc) if isinstance(doc, model.StatusDoc) else overview(doc)


def records(read: Records, all_: bool) -> str:
    one, many = ("record", "records") if all_ else ("live entity", "live entities")
    noun = one if len(read.rows) == 1 else many
    return "\n".join([*read.lines, f"{len(read.rows)} {noun}"])


def matches(lines: list[str]) -> str:
    return "\n".join([*lines, f"{len(lines)} match{'es' if len(lines) != 1 else ''}"])


def work_show(doc: dict[str, Any]) -> str:
    from service.model.views import work_show_text

    return work_show_text(doc)


def work_list(doc: dict[str, Any]) -> str:
    from service.model.views import work_list_text

    return work_list_text(doc)


def events(rows: list[Row]) -> str:
    return "\n".join(
        f"{r['id']}  {r['ts']}  {r['origin']['actor']:<5}  {r['type']}  {event_subject(r)}" for r in rows
    )


def fold(report: FoldReport) -> str:
    lines: list[str] = []
    for row in report.logs:
        lines.append(
            f"{row.log or '(workspace)'}: {row.events} events, {row.entities} records, "
            f"{row.unknown} unknown types, {len(row.quarantined)} quarantined"
        )
        lines += [f"  quarantined {q.file}:{q.line}: {q.reason}" for q in row.quarantined]
        lines += [f"  health signal: {detail}" for detail in row.signals]
    return "\n".join(lines)
