"""The text renders of the read documents (`service/app/queries.py`), for a terminal or an
agent; each delegates to the model's render of that document."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.core.commands.config import TOKENS_PER_CHAR
from service.core.events.events import EXPOSURES
from service.core.gates.controls import escape as escape  # control characters as \uXXXX, for a terminal

if TYPE_CHECKING:
    from service.app.exchange import DocketExport, DocketImport, ParquetExport
    from service.app.queries import (
        Context,
        FoldReport,
        Outcome,
        Parallel,
        QuestionCheck,
        Records,
        Row,
        WorkList,
        WorkShow,
    )
    from service.app.settings import AliasLine, Created, ProjectRow, SuperselfImport, Tokens
    from service.core.projections.overview import OverviewDoc
    from service.core.projections.status import StatusDoc


def context(read: Context, agent: bool) -> str:
    """The agent render within the budget, else the whole document as terminal markdown."""
    from service.core.projections import context as model

    if not isinstance(read.doc, model.Draft):
        return overview(read.doc, read.budget, read.per_char)
    if agent:
        return read.doc.render(read.budget, read.per_char)
    return model.compose_all(read.doc.doc())


def overview(doc: OverviewDoc, budget: int | None = None, per_char: float = TOKENS_PER_CHAR) -> str:
    from service.core.projections.overview import render_overview

    return render_overview(doc, budget, per_char)


def status(doc: StatusDoc | OverviewDoc) -> str:
    from service.core.projections import status as model

    return model.render_status(doc) if isinstance(doc, model.StatusDoc) else overview(doc)


def records(read: Records, all_: bool) -> str:
    one, many = ("record", "records") if all_ else ("live entity", "live entities")
    noun = one if len(read.rows) == 1 else many
    return "\n".join([*read.lines, f"{len(read.rows)} {noun}"])


def matches(lines: list[str], hidden: int = 0, every: str = "--all") -> str:
    """Search's lines, their count, and how many it left out because context shows them
    (`every`: how the caller asks for them too)."""
    count = f"{len(lines)} match{'es' if len(lines) != 1 else ''}"
    if hidden:
        count += f"; {hidden} more that context shows left out ({every} lists them)"
    return "\n".join([*lines, count])


def work_show(doc: WorkShow) -> str:
    import msgspec

    from service.core.projections.views import work_show_text

    return work_show_text(msgspec.to_builtins(doc))


def work_list(doc: WorkList) -> str:
    import msgspec

    from service.core.projections.views import work_list_text

    return work_list_text(msgspec.to_builtins(doc))


def events(rows: list[Row]) -> str:
    from service.app.authors import byline
    from service.app.queries import event_subject

    return "\n".join(
        f"{r['id']}  {r['ts']}  {r['origin']['actor']:<5}  {byline(r)}  {r['type']}  {event_subject(r)}"
        for r in rows
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


def question_check(doc: QuestionCheck) -> str:
    lines = [f"  {item.answer} → {item.action}" for item in doc.options]
    if doc.moot:
        lines.append("moot: every answer leads to the same action; drop the question")
    else:
        lines.append(f"worth asking: the answers lead to {doc.actions} different actions")
    return "\n".join(lines)


def parallel(doc: Parallel) -> str:
    lines = [
        f"conflict ({c.kind}): {c.writer} writes {c.path}, {c.other} touches {c.other_path}"
        for c in doc.conflicts
    ]
    lines += [f"undeclared: {u} declares no --reads/--writes; it cannot be certified" for u in doc.undeclared]
    lines.append("commute: safe to run in parallel" if doc.commute else "do not run these in parallel")
    return "\n".join(lines)


def outcome(doc: Outcome) -> str:
    span = f"{doc.start[:10]}..{doc.end[:10]}" + ("" if doc.done else " (not done: up to the head)")
    lines = [f"{doc.work}: {span}"]
    for key, items in (
        ("intentional", doc.intentional),
        ("unintentional", doc.unintentional),
        ("unrealized", doc.unrealized),
    ):
        lines.append(f"{key}: {', '.join(items) if items else '-'}")
    return "\n".join(lines)


def import_summary(summary: DocketImport) -> str:
    """What an import did, and where the records went."""
    from service.core.projections.render import plural

    applied = f"{plural(summary.corrections, 'correction')} applied, {plural(summary.reviews, 'review')}"
    lines = [
        f"{plural(summary.imported, 'record')} imported from {summary.ledger}, "
        f"{summary.skipped} already here ({applied})"
    ]
    placed = summary.placed
    where = ", ".join(f"{placed[tier]} at {tier}" for tier in EXPOSURES if placed[tier])
    if where:
        lines.append(f"placed: {where} ({summary.superseded} superseded in the ledger wait at search)")
    if summary.demoted:
        lines.append(
            f"{summary.demoted} placed a tier lower than a native add would: their tier is at its cap "
            "(`self state place ID --exposure …` moves one; caps are in workspace.json)"
        )
    kept = summary.kept_as_written
    if kept:
        listed = ", ".join(f"{rule} ({count})" for rule, count in kept.items())
        lines.append(f"kept as written, though a new record would be refused: {listed}")
    if summary.torn_line_skipped:
        lines.append("skipped a torn last line (an append that did not finish), as Docket does")
    if summary.not_read:
        lines.append(f"not read, left out: {', '.join(summary.not_read)} (from a newer Docket)")
    late = summary.corrections_not_applied
    if late:
        lines.append(
            f"not applied: {', '.join(late)}, corrections of records imported before them "
            "(change those records here: `self claim assess`, or supersede them)"
        )
    return "\n".join(lines)


def exported_docket(done: DocketExport) -> str:
    lines = f"{done.records} records, {done.corrections} corrections and {done.reviews} reviews"
    text = f"{lines} written to {done.path}"
    if done.renumbered:
        pairs = ", ".join(f"{pair.was} → {pair.now}" for pair in done.renumbered)
        text += (
            f"\n{len(done.renumbered)} renumbered into the one id sequence Docket's reader wants across "
            f"kinds: {pairs}"
        )
    return text


def exported_parquet(done: ParquetExport) -> str:
    return f"{done.rows} decisions written to {done.path}"


def created(doc: Created) -> str:
    return f"created a workspace store in {doc.workspace}; export SELF_WORKSPACE={doc.workspace}"


def projects(rows: list[ProjectRow]) -> str:
    marks = ["  (archived)" if row.archived else "" for row in rows]
    return "\n".join(
        f"{row.slug}  {row.description or ''}{mark}".rstrip() for row, mark in zip(rows, marks, strict=True)
    )


def aliases(rows: list[AliasLine]) -> str:
    lines = []
    for row in rows:
        prio = "" if row.priority is None else f" · priority {row.priority}"
        edited = "  (edited)" if row.edited else ""
        lines.append(f"{row.verb:<12} {row.label:<12} {row.exposure}{prio}{edited}")
    return "\n".join(lines)


def tokens(doc: Tokens) -> str:
    return (
        f"tokens per character: {doc.tokens_per_char} (an estimate; measure your model and --set it)\n"
        f"caps: full {doc.full_tokens} · index {doc.index_tokens} tokens per scope; "
        f"context budget {doc.context_budget}"
    )


def superself_imported(summary: SuperselfImport) -> str:
    return "\n".join(f"{slug}: {count} events imported" for slug, count in summary.projects.items())
