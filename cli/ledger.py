"""The ledger's commands: `claim`, `question` and `decide` with their ledger flags,
`claim assess`, `decide revoke`, and `review`."""

from __future__ import annotations

from typing import Any

import typer

from cli import records
from cli.common import JsonOpt, workspace
from service.model.config import AliasRow


def _group(app: typer.Typer, name: str) -> typer.Typer:
    """The sub-app registered on `app` under `name` (added with `app.add_typer`)."""
    found = next(g.typer_instance for g in app.registered_groups if g.name == name)
    assert found is not None
    return found


def add_command(sub: typer.Typer, verb: str, default: AliasRow) -> None:
    """`self VERB add "text"` for a ledger kind: the preset flags plus the ledger's."""
    decision = default.label == "decision"
    claim = default.label == "claim"
    question = default.label == "question"

    @sub.command("add")
    def add(
        text: str,
        why: str | None = typer.Option(None, "--rationale", "--why", help="Why it holds or was chosen."),
        supports: list[str] = typer.Option(
            [],
            "--supports",
            help="ID[,ID...]: one set of grounds that together support it (repeatable: "
            "each set is an alternative).",
        ),
        answers: list[str] = typer.Option([], "--answers", help="A question this answers (repeatable)."),
        supersedes: str | None = records.Supersedes,
        supersede_reason: str | None = typer.Option(
            None, "--supersede-reason", help="restate|revise|reverse (default revise)."
        ),
        applies_to: list[str] = typer.Option(
            [], "--scope", help="A path or glob it is about (repeatable; recorded, decides nothing derived)."
        ),
        evidence: list[str] = typer.Option(
            [], "--evidence", help="A reference: commit, URL, file (repeatable)."
        ),
        revisit: str | None = typer.Option(None, "--revisit", help="When to look again, YYYY-MM-DD."),
        cost_if_wrong: str | None = typer.Option(None, "--cost-if-wrong", help="What it costs if wrong."),
        pin: bool = typer.Option(False, "--pin", help="Always in context (full exposure)."),
        state: str | None = typer.Option(
            None, "--state", help="unassessed|accepted|disputed|rejected.", hidden=not claim
        ),
        choice: str | None = typer.Option(None, "--choice", help="The option chosen.", hidden=not decision),
        alternative: list[str] = typer.Option(
            [], "--alternative", help="An option not chosen (repeatable).", hidden=not decision
        ),
        decided_by: str | None = typer.Option(None, "--decided-by", help="Who decided.", hidden=not decision),
        depends_on: list[str] = typer.Option(
            [], "--depends-on", help="A prerequisite claim or decision (repeatable).", hidden=not decision
        ),
        gate: str | None = typer.Option(
            None, "--gate", help="A policy: allow|deny|ask for matching tool calls.", hidden=not decision
        ),
        tool: str | None = typer.Option(
            None, "--tool", help="The tool a policy applies to.", hidden=not decision
        ),
        pattern: str | None = typer.Option(
            None, "--pattern", help="A glob over the call's command or file path.", hidden=not decision
        ),
        option: list[str] = typer.Option(
            [],
            "--option",
            help='"ANSWER=ACTION": a candidate answer and the action it leads to (repeatable).',
            hidden=not question,
        ),
        proposed: bool = records.Proposed,
        exposure: str | None = records.Exposure,
        priority: int | None = records.Priority,
        criterion: list[str] = records.Criterion,
        target: str | None = records.Target,
        demote: list[str] = records.Demote,
        at_workspace: bool = records.AtWorkspace,
        as_json: bool = JsonOpt,
    ) -> None:
        """Record a new one with its grounds, answers and supersession."""
        command = records.preset_command(
            verb,
            text,
            why=why,
            supersedes=supersedes,
            exposure=exposure,
            priority=priority,
            criterion=criterion,
            target=target,
            demote=demote,
            at_workspace=at_workspace,
            proposed=proposed,
            state=state,
            choice=choice,
            alternatives=tuple(alternative),
            decided_by=decided_by,
            depends_on=tuple(depends_on),
            supports=tuple(supports),
            answers=tuple(answers),
            supersede_reason=supersede_reason,
            applies_to=tuple(applies_to),
            evidence=tuple(evidence),
            revisit=revisit,
            cost_if_wrong=cost_if_wrong,
            pinned=pin,
            options=tuple(option),
            gate=gate,
            tool=tool,
            pattern=pattern,
        )
        records.run(command, as_json)

    if claim:

        @sub.command("assess")
        def assess(
            record: str,
            state: str = typer.Option(..., "--state", help="unassessed|accepted|disputed|rejected."),
            why: str | None = typer.Option(None, "--why", help="What the assessment rests on."),
            as_json: bool = JsonOpt,
        ) -> None:
            """Move a claim to another recorded state."""
            from service.model.requests import Assess

            records.run(Assess(record=record, state=state, why=why), as_json)

    if question:

        @sub.command("check")
        def check(record: str, as_json: bool = JsonOpt) -> None:
            """Whether any answer changes the action; a question whose answers all lead to the
            same action is moot and need not be asked."""
            from cli.common import echo, emit_json
            from service.model import ledger

            ws = workspace()
            doc = ledger.check_question(ws.state(ws.log_of(record)), record)
            if as_json:
                return emit_json(doc)
            for item in doc["options"]:
                echo(f"  {item['answer']} → {item['action']}")
            if doc["moot"]:
                echo("moot: every answer leads to the same action; drop the question")
            else:
                echo(f"worth asking: the answers lead to {doc['actions']} different actions")

    if decision:

        @sub.command("revoke")
        def revoke(
            record: str,
            why: str | None = typer.Option(None, "--why", help="Why it no longer holds."),
            as_json: bool = JsonOpt,
        ) -> None:
            """Revoke an adopted decision (what stood on it loses a ground)."""
            from service.model.requests import Revoke

            records.run(Revoke(record=record, why=why), as_json)


def register(app: typer.Typer) -> None:
    @app.command("review")
    def review(
        record: str,
        why: str | None = typer.Option(None, "--why", help="What the review concluded."),
        as_json: bool = JsonOpt,
    ) -> None:
        """Acknowledge the flags a ledger record owes of its own; cleared until a ground changes
        again (a flag it inherits from a flagged or blocked ground clears with that ground)."""
        from service.model.requests import Review

        records.run(Review(record=record, why=why), as_json)

    @app.command("gate")
    def gate(as_json: bool = JsonOpt) -> None:
        """Read a coding agent's pre-tool-use hook JSON on stdin; print allow, deny or ask as
        JSON, from the ledger's policy decisions and the call's reversibility."""
        import sys

        from cli.common import emit_json

        emit_json(rule_stdin(sys.stdin.read()))

    work = _group(app, "work")

    @work.command("parallel")
    def parallel(units: list[str], as_json: bool = JsonOpt) -> None:
        """Whether work units commute (none writes what another reads or writes), from their
        declared --reads and --writes; else each conflicting pair and path."""
        from cli.common import echo, emit_json
        from service.model import worksets

        ws = workspace()
        doc = worksets.parallel(ws.state(ws.require_project()), units)
        if as_json:
            return emit_json(doc)
        for conflict in doc["conflicts"]:
            echo(
                f"conflict ({conflict['kind']}): {conflict['writer']} writes {conflict['path']}, "
                f"{conflict['other']} touches {conflict['other_path']}"
            )
        for unit in doc["undeclared"]:
            echo(f"undeclared: {unit} declares no --reads/--writes; it cannot be certified")
        echo("commute: safe to run in parallel" if doc["commute"] else "do not run these in parallel")

    @work.command("outcome")
    def outcome(record: str, as_json: bool = JsonOpt) -> None:
        """Intentional and unintentional outcomes: the files the linked checkout changed between
        the unit's start and done commits, against the outcomes it declared (--intends)."""
        from cli.common import echo, emit_json

        doc = workspace().work_outcome(record)
        if as_json:
            return emit_json(doc)
        span = f"{str(doc['start'])[:10]}..{str(doc['end'])[:10]}" + (
            "" if doc["done"] else " (not done: up to the head)"
        )
        echo(f"{doc['work']}: {span}")
        for key in ("intentional", "unintentional", "unrealized"):
            items = doc[key]
            assert isinstance(items, list)
            echo(f"{key}: {', '.join(items) if items else '-'}")

    imports = _group(app, "import")

    @imports.command("docket")
    def import_docket(path: str, as_json: bool = JsonOpt) -> None:
        """Import a Docket schema-2 ledger (JSONL) as Docket reads it: corrections and reviews
        applied, ids kept as aliases within the ledger's own id space, records as written."""
        from pathlib import Path

        from cli.common import echo, emit_json

        summary = workspace().import_docket(Path(path))
        if as_json:
            return emit_json(summary)
        echo(import_text(summary))

    export = typer.Typer(no_args_is_help=True, add_completion=False, help="Export the ledger and its schema.")
    app.add_typer(export, name="export")

    @export.command("jsonschema")
    def jsonschema(as_json: bool = JsonOpt) -> None:
        """Print the JSON Schema (draft 2020-12) of the event envelope and of each ledger record."""
        from cli.common import emit_json
        from service.model.schema import document

        emit_json(document())

    @export.command("docket")
    def export_docket(out: str, as_json: bool = JsonOpt) -> None:
        """Write this project's ledger as a Docket schema-2 file (JSONL) Docket's reader accepts."""
        from pathlib import Path

        from cli.common import echo, emit_json

        done = workspace().export_docket(Path(out))
        if as_json:
            return emit_json(done)
        echo(f"{done['records']} records and {done['reviews']} reviews written to {done['path']}")

    @export.command("parquet")
    def parquet(out: str, as_json: bool = JsonOpt) -> None:
        """Write one row per decision (grounds, status, known outcome) to a Parquet file."""
        from cli.common import echo, emit_json

        done = write_parquet(out)
        if as_json:
            return emit_json(done)
        echo(f"{done['rows']} decisions written to {done['path']}")


def import_text(summary: dict[str, Any]) -> str:
    """What an import did, and where the records went."""
    from service.model.render import plural

    applied = (
        f"{plural(summary['corrections'], 'correction')} applied, {plural(summary['reviews'], 'review')}"
    )
    lines = [
        f"{plural(summary['imported'], 'record')} imported from {summary['ledger']}, "
        f"{summary['skipped']} already here ({applied})"
    ]
    placed = summary["placed"]
    where = ", ".join(f"{placed[tier]} at {tier}" for tier in ("full", "index", "search") if placed[tier])
    if where:
        lines.append(f"placed: {where} ({summary['superseded']} superseded in the ledger wait at search)")
    if summary["demoted"]:
        lines.append(
            f"{summary['demoted']} placed a tier lower than a native add would: their tier is at its cap "
            "(`self state place ID --exposure …` moves one; caps are in workspace.json)"
        )
    kept = summary["kept_as_written"]
    if kept:
        listed = ", ".join(f"{rule} ({count})" for rule, count in kept.items())
        lines.append(f"kept as written, though a new record would be refused: {listed}")
    if summary.get("torn_line_skipped"):
        lines.append("skipped a torn last line (an append that did not finish), as Docket does")
    if summary["not_read"]:
        lines.append(f"not read, left out: {', '.join(summary['not_read'])} (from a newer Docket)")
    late = summary["corrections_not_applied"]
    if late:
        lines.append(
            f"not applied: {', '.join(late)}, corrections of records imported before them "
            "(change those records here: `self claim assess`, or supersede them)"
        )
    return "\n".join(lines)


def rule_stdin(text: str) -> dict[str, object]:
    """The gate's answer; it never fails the hook: an unreadable call is asked about."""
    from pathlib import Path

    from service import checkout
    from service.model import gate
    from service.model.errors import Invalid

    try:
        tool, tool_input, cwd = gate.parse(text)
    except Invalid as exc:
        return gate.Ruling("ask", f"{exc}; a person decides", "?", "").document()
    state = None
    ws = None
    try:
        ws = workspace()
        if ws.project:
            state = ws.state(ws.require_project())
    except Exception:  # no store or project here: reversibility alone decides
        state = None
    facts = checkout.facts(Path(cwd or "."), gate.questions(tool, tool_input))
    ruling = gate.rule(tool, tool_input, state, facts)
    if ws is not None:
        ws.log_ruling(ruling.document() | {"subject": ruling.subject})
    return ruling.document()


def write_parquet(out: str) -> dict[str, object]:
    """Every decision of this project as one Parquet row (pyarrow, the `parquet` extra)."""
    from service.model.errors import Invalid

    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise Invalid("Parquet export needs pyarrow: pip install 'selfhub[parquet]'") from exc
    _check_target(out)
    rows = workspace().decision_rows()
    files = pa.list_(pa.string())
    unit = pa.struct(
        [
            ("id", pa.string()),
            ("state", pa.string()),
            ("intentional", files),
            ("unintentional", files),
            ("unrealized", files),
        ]
    )
    schema = pa.schema(
        [
            ("id", pa.string()),
            ("project", pa.string()),
            ("text", pa.string()),
            ("choice", pa.string()),
            ("alternatives", pa.list_(pa.string())),
            ("decided_by", pa.string()),
            ("rationale", pa.string()),
            ("state", pa.string()),
            ("current", pa.bool_()),
            ("support", pa.string()),
            ("supports", pa.list_(pa.list_(pa.string()))),
            ("review_owed", pa.list_(pa.string())),
            ("depends_on", pa.list_(pa.string())),
            ("blocked", pa.bool_()),
            ("blocked_by", pa.list_(pa.string())),
            ("answers", pa.list_(pa.string())),
            ("outcome", pa.string()),
            ("superseded_by", pa.string()),
            ("alias", pa.string()),
            ("work", pa.list_(unit)),
            ("created", pa.string()),
            ("changed", pa.string()),
        ]
    )
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), out)
    return {"path": out, "rows": len(rows)}


def _check_target(out: str) -> None:
    """The file a Parquet export writes: a path in an existing folder, not a folder."""
    from pathlib import Path

    from service.model.errors import Invalid

    target = Path(out).expanduser()
    if target.is_dir():
        raise Invalid(f"{out} is a folder: give the file to write, such as {target / 'decisions.parquet'}")
    if not target.parent.is_dir():
        raise Invalid(f"{out}: there is no folder {target.parent}; create it or write somewhere else")
