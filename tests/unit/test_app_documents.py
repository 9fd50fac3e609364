"""The application layer's documents of imports, exports, the doctor and a clone print the JSON
bytes of the dicts they replace, and keep the fields of the adapter structs they mirror."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from service.adapters.sync.doctor import LogReport, Report
from service.adapters.sync.engine import Summary
from service.adapters.sync.identity import Flag
from service.app import exchange, execute, remotes, settings
from service.app.memory import MemoryStore
from service.app.writes import execute_import
from service.core.commands.requests import ImportDocket, ProjectAdd

URL = "https://example.org/ws.git"
LEDGER = Path(__file__).resolve().parents[1] / "fixtures" / "docket" / "first.jsonl"


def encoded(doc: object) -> bytes:
    return msgspec.json.encode(doc)


def project_store() -> MemoryStore:
    store = MemoryStore()
    execute(store.workspace(None), ProjectAdd(slug="app"))
    return store


def test_a_docket_import_and_export_encode_as_their_dicts(tmp_path: Path) -> None:
    imported = exchange.import_docket(project_store().workspace("app"), LEDGER)
    lines, _ = exchange.json_lines(LEDGER, "a ledger")
    _, summary = execute_import(project_store().workspace("app"), ImportDocket(lines=tuple(lines)))
    assert encoded(imported) == encoded(summary | {"torn_line_skipped": False})
    assert imported.imported > 0

    store = project_store()
    exchange.import_docket(store.workspace("app"), LEDGER)
    done = exchange.export_docket(store.workspace("app"), tmp_path / "out.jsonl")
    moved = [{"was": pair.was, "now": pair.now} for pair in done.renumbered]
    as_dict = {"path": str(tmp_path / "out.jsonl"), "records": done.records, "reviews": done.reviews}
    as_dict |= {"renumbered": moved, "corrections": done.corrections}
    assert encoded(done) == encoded(as_dict) and done.records == imported.records


def test_a_superself_summary_encodes_as_its_dict() -> None:
    summary: dict[str, Any] = {"projects": {"app": 3, "web": 0}, "skipped_lines": {"app": [(4, "not JSON")]}}
    assert encoded(msgspec.convert(summary, settings.SuperselfImport)) == encoded(summary)


def test_the_doctor_document_encodes_as_the_report_with_each_logs_damage() -> None:
    logs = [LogReport("", 3, 0, 0, 0, 0, True), LogReport("app", 9, 1, 2, 1, 0, False, torn=1)]
    flag = Flag("origin", URL, ["01kdvdna0419epqammaqhye1m2"], "2026-12-01T06:00:00Z")
    report = Report(logs, ["workspace.json"], True, "ab" * 20, remotes=[flag], locks=["index.lock"])
    data = msgspec.to_builtins(report)
    for row, log in zip(data["logs"], logs, strict=True):
        row["damaged"] = log.damaged
    assert encoded(remotes.doctor_document(report)) == encoded(data)
    assert remotes.Doctored.__struct_fields__ == Report.__struct_fields__
    assert remotes.LogCheck.__struct_fields__ == (*LogReport.__struct_fields__, "damaged")
    assert remotes.DifferingRemote.__struct_fields__ == Flag.__struct_fields__


def test_the_clone_document_is_the_folder_then_the_sync_summary() -> None:
    summary = Summary(remote="origin", url=URL, head="cd" * 20, pulled=7, seconds=1.25)
    expected = {"workspace": "/srv/team", **msgspec.to_builtins(summary)}
    assert encoded(remotes.clone_document("/srv/team", summary)) == encoded(expected)
    assert remotes.Cloned.__struct_fields__ == ("workspace", *Summary.__struct_fields__)
