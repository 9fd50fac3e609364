"""A project's ledger in and out: Docket schema-2 files (JSONL) — the import runs as a command
(`requests.ImportDocket`, through `writes.execute_import`), the export writes a new file — and
the decisions as a Parquet file (pyarrow, the `parquet` extra)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from service.core.errors import Invalid

if TYPE_CHECKING:
    from service.app.workspace import Workspace


class DocketImport(msgspec.Struct, frozen=True):
    """`self import docket`: what an import did, and where the records went."""

    ledger: str  # the ledger's identity
    records: int
    imported: int
    skipped: int  # imported before
    corrections: int
    corrections_not_applied: list[str]  # of records imported before them
    reviews: int
    placed: dict[str, int]  # tier → records
    superseded: int
    demoted: int  # placed a tier lower than a native add would: the tier is at its cap
    kept_as_written: dict[str, int]  # a write rule a new record would break → records
    not_read: dict[str, int]  # a field of a newer Docket → lines
    torn_line_skipped: bool


class Renumbered(msgspec.Struct, frozen=True):
    """An imported record's Docket id that left the one sequence, and the id it was written with."""

    was: str
    now: str


class DocketExport(msgspec.Struct, frozen=True):
    """`self export docket`: the file written, its records, its correction and review lines,
    and the ids renumbered into the one sequence Docket's reader wants across kinds."""

    path: str
    records: int
    reviews: int
    renumbered: list[Renumbered]
    corrections: int = 0


def import_docket(ws: Workspace, path: Path) -> DocketImport:
    """A Docket ledger's records into this project, in one commit (already imported: skipped)."""
    from service.app.writes import execute_import
    from service.core.commands.requests import ImportDocket
    from service.core.ledger import docket

    lines, torn = json_lines(path.expanduser(), "a Docket ledger is a .jsonl file")
    docket.read(lines)  # a ledger Docket's reader refuses is refused before the store is opened
    _, summary = execute_import(ws, ImportDocket(lines=tuple(lines)))  # as written: the export's bytes
    return msgspec.convert(summary | {"torn_line_skipped": torn}, DocketImport)


def export_docket(ws: Workspace, path: Path) -> DocketExport:
    """This project's ledger as a Docket schema-2 file (a new file: an existing one is kept)."""
    from service.core.interop import docket_out

    project = ws.require_project()
    authors = docket_out.written_by(ws.store.read(project).events)
    written = docket_out.docket_export(ws.state(project), authors)
    lines = written.lines
    target = path.expanduser()
    try:
        with target.open("x", encoding="utf-8") as handle:
            handle.writelines(text + "\n" for text in written.texts)
    except FileExistsError as exc:
        raise Invalid(f"{path} exists: export writes a new file (remove it, or name another)") from exc
    except OSError as exc:
        raise Invalid(f"{path}: cannot write it ({exc.strerror})") from exc
    kinds = [line["kind"] for line in lines]
    renumbered = [Renumbered(old, new) for old, new in written.renumbered]
    corrections, reviews = kinds.count("correction"), kinds.count("review")
    return DocketExport(str(path), len(kinds) - corrections - reviews, reviews, renumbered, corrections)


def json_lines(path: Path, what: str) -> tuple[list[tuple[int, str]], bool]:
    """The non-empty lines of a JSONL file as written, each checked to be JSON, with their
    line numbers; and whether a torn last line was left out (no newline after it and not
    JSON: an append that died midway, which Docket's reader skips too)."""
    if not path.is_file():
        raise Invalid(f"{path}: no such file ({what})")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise Invalid(f"{path} is not UTF-8 text (byte {exc.start} is not): {what}") from None
    except OSError as exc:
        raise Invalid(f"{path}: cannot read it ({exc.strerror})") from exc
    lines = text.splitlines()
    rows: list[tuple[int, str]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            json.loads(line)
            rows.append((number, line))
        except ValueError as exc:
            if number == len(lines) and not text.endswith("\n"):
                return rows, True
            raise Invalid(f"{path}:{number} is not JSON ({exc})") from exc
    return rows, False


class ParquetExport(msgspec.Struct, frozen=True):
    """`self export parquet`: the file written and its rows, one per decision."""

    path: str
    rows: int


def export_parquet(ws: Workspace, out: str) -> ParquetExport:
    """Every decision of this project as one Parquet row (pyarrow, the `parquet` extra)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise Invalid("Parquet export needs pyarrow: pip install 'selfhub[parquet]'") from exc
    _check_target(out)
    rows = ws.decision_rows()
    pq.write_table(pa.Table.from_pylist(rows, schema=_decision_schema(pa)), out)
    return ParquetExport(out, len(rows))


def _decision_schema(pa: Any) -> Any:
    """The Parquet schema of a decision row (`exchange.decision_rows`, each unit's outcome added)."""
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
    return pa.schema(
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
            ("applicable", pa.bool_()),
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


def _check_target(out: str) -> None:
    """The file a Parquet export writes: a path in an existing folder, not a folder."""
    target = Path(out).expanduser()
    if target.is_dir():
        raise Invalid(f"{out} is a folder: give the file to write, such as {target / 'decisions.parquet'}")
    if not target.parent.is_dir():
        raise Invalid(f"{out}: there is no folder {target.parent}; create it or write somewhere else")
