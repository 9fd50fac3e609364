"""A project's ledger in and out as Docket schema-2 files (JSONL): the import runs as a command
(`requests.ImportDocket`, through `writes.execute_import`), the export writes a new file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from service.model.errors import Invalid

if TYPE_CHECKING:
    from service.workspace import Workspace


def import_docket(ws: Workspace, path: Path) -> dict[str, Any]:
    """A Docket ledger's records into this project, in one commit (already imported: skipped)."""
    from service.app.writes import execute_import
    from service.model import docket
    from service.model.requests import ImportDocket

    lines, torn = json_lines(path.expanduser(), "a Docket ledger is a .jsonl file")
    docket.read(lines)  # a ledger Docket's reader refuses is refused before the store is opened
    _, summary = execute_import(ws, ImportDocket(lines=tuple(lines)))
    return summary | {"torn_line_skipped": torn}


def export_docket(ws: Workspace, path: Path) -> dict[str, object]:
    """This project's ledger as a Docket schema-2 file (a new file: an existing one is kept)."""
    from service.model import exchange

    written = exchange.docket_export(ws.state(ws.require_project()))
    lines = written.lines
    target = path.expanduser()
    try:
        with target.open("x", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in lines)
    except FileExistsError as exc:
        raise Invalid(f"{path} exists: export writes a new file (remove it, or name another)") from exc
    except OSError as exc:
        raise Invalid(f"{path}: cannot write it ({exc.strerror})") from exc
    records = sum(1 for line in lines if line["kind"] not in ("review", "correction"))
    return {
        "path": str(path),
        "records": records,
        "reviews": len(lines) - records,
        "renumbered": [{"was": old, "now": new} for old, new in written.renumbered],
    }


def json_lines(path: Path, what: str) -> tuple[list[tuple[int, Any]], bool]:
    """The non-empty lines of a JSONL file, parsed, with their line numbers; and whether a
    torn last line was left out (no newline after it and not JSON: an append that died
    midway, which Docket's reader skips too)."""
    if not path.is_file():
        raise Invalid(f"{path}: no such file ({what})")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise Invalid(f"{path} is not UTF-8 text (byte {exc.start} is not): {what}") from None
    except OSError as exc:
        raise Invalid(f"{path}: cannot read it ({exc.strerror})") from exc
    lines = text.splitlines()
    rows: list[tuple[int, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append((number, json.loads(line)))
        except ValueError as exc:
            if number == len(lines) and not text.endswith("\n"):
                return rows, True
            raise Invalid(f"{path}:{number} is not JSON ({exc})") from exc
    return rows, False
