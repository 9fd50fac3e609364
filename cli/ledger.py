"""The ledger's commands: `claim`, `question` and `decide` with their ledger flags,
`claim assess`, `decide revoke`, and `review`."""

from __future__ import annotations

import typer

from cli import records
from cli.common import JsonOpt, emit_json, show, workspace
from service.app.settings import CLAIM_STATES, AliasRow

STATE_HELP = "|".join(CLAIM_STATES) + "."


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
        state: str | None = typer.Option(None, "--state", help=STATE_HELP, hidden=not claim),
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
        duplicate: bool = records.Duplicate,
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
            duplicate=duplicate,
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
            state: str = typer.Option(..., "--state", help=STATE_HELP),
            why: str | None = typer.Option(None, "--why", help="What the assessment rests on."),
            as_json: bool = JsonOpt,
        ) -> None:
            """Move a claim to another recorded state."""
            from service.core.commands.requests import Assess

            records.run(Assess(record=record, state=state, why=why), as_json)

    if question:

        @sub.command("check")
        def check(record: str, as_json: bool = JsonOpt) -> None:
            """Whether any answer changes the action; a question whose answers all lead to the
            same action is moot and need not be asked."""
            from service.app import queries, texts

            show(queries.question_check(workspace(), record), as_json, texts.question_check)

    if decision:

        @sub.command("revoke")
        def revoke(
            record: str,
            why: str | None = typer.Option(None, "--why", help="Why it no longer holds."),
            as_json: bool = JsonOpt,
        ) -> None:
            """Revoke an adopted decision (what stood on it loses a ground)."""
            from service.core.commands.requests import Revoke

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
        from service.core.commands.requests import Review

        records.run(Review(record=record, why=why), as_json)

    @app.command("gate")
    def gate(as_json: bool = JsonOpt) -> None:
        """Read a coding agent's pre-tool-use hook JSON on stdin; print allow, deny or ask as
        JSON, from the ledger's policy decisions and the call's reversibility."""
        import sys

        from service.app import gate

        emit_json(gate.rule(sys.stdin.read(), workspace))

    work = _group(app, "work")

    @work.command("parallel")
    def parallel(units: list[str], as_json: bool = JsonOpt) -> None:
        """Whether work units commute (none writes what another reads or writes), from their
        declared --reads and --writes; else each conflicting pair and path."""
        from service.app import queries, texts

        show(queries.parallel(workspace(), units), as_json, texts.parallel)

    @work.command("outcome")
    def outcome(record: str, as_json: bool = JsonOpt) -> None:
        """Intentional and unintentional outcomes: the files the linked checkout changed between
        the unit's start and done commits, against the outcomes it declared (--intends)."""
        from service.app import queries, texts

        show(queries.work_outcome(workspace(), record), as_json, texts.outcome)

    imports = _group(app, "import")

    @imports.command("docket")
    def import_docket(path: str, as_json: bool = JsonOpt) -> None:
        """Import a Docket schema-2 ledger (JSONL) as Docket reads it: corrections and reviews
        applied, ids kept as aliases within the ledger's own id space, records as written."""
        from pathlib import Path

        from service.app import exchange, texts

        show(exchange.import_docket(workspace(), Path(path)), as_json, texts.import_summary)

    export = typer.Typer(no_args_is_help=True, add_completion=False, help="Export the ledger and its schema.")
    app.add_typer(export, name="export")

    @export.command("jsonschema")
    def jsonschema(as_json: bool = JsonOpt) -> None:
        """Print the JSON Schema (draft 2020-12) of the event envelope and of each ledger record."""
        from service.app import queries

        emit_json(queries.jsonschema())

    @export.command("docket")
    def export_docket(out: str, as_json: bool = JsonOpt) -> None:
        """Write this project's ledger as a Docket schema-2 file (JSONL) Docket's reader accepts."""
        from pathlib import Path

        from service.app import exchange, texts

        done = exchange.export_docket(workspace(), Path(out))
        show(done, as_json, texts.exported_docket)

    @export.command("parquet")
    def parquet(out: str, as_json: bool = JsonOpt) -> None:
        """Write one row per decision (grounds, status, known outcome) to a Parquet file."""
        from service.app import exchange, texts

        show(exchange.export_parquet(workspace(), out), as_json, texts.exported_parquet)
