"""The application layer's typed read documents print the same JSON bytes as the wiring's
dicts they replace (`--json` outputs stay as they were), on a real store."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from service.adapters.store import Store
from service.app import execute, gate, queries, settings
from service.app.workspace import Workspace
from service.core.commands.requests import Add, ProjectAdd
from service.core.events.events import Origin
from service.core.gates.action import Ruling
from service.core.ledger import ledger


def encoded(doc: object) -> bytes:
    return msgspec.json.encode(doc)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    store = Store.init(tmp_path / "store")
    execute(Workspace(store, None, Origin("human", True)), ProjectAdd(slug="demo", description="a demo"))
    here = Workspace(store, "demo", Origin("human", True))
    execute(here, Add(text="ship it", preset="goal"))
    return here


def test_fold_tokens_aliases_and_projects_encode_as_the_wiring_does(ws: Workspace) -> None:
    assert encoded(queries.refold(ws)) == encoded(ws.refold())
    assert encoded(settings.tokens(ws, None)) == encoded(ws.tokens(None))
    assert encoded(settings.aliases(ws)) == encoded(ws.aliases())
    assert encoded(settings.projects(ws)) == encoded(ws.projects())
    assert [row.slug for row in settings.projects(ws)] == ["demo"]


def test_question_check_encodes_as_the_model_does(ws: Workspace) -> None:
    options = ("json=parse with the stdlib", "cbor=write a codec")
    [added] = execute(ws, Add(text="json or cbor?", preset="question", options=options))
    record = json.loads(encoded(added))["payload"]["entity"]
    doc = queries.question_check(ws, record)
    assert encoded(doc) == encoded(ledger.check_question(ws.state("demo"), record))
    assert doc.changes_action and doc.actions == 2


def test_the_gate_answer_encodes_as_the_ruling_document(ws: Workspace) -> None:
    call = json.dumps({"tool_name": "Read", "tool_input": {"file_path": "README.md"}, "cwd": "."})
    answer = gate.rule(call, lambda: ws)
    assert answer.hookSpecificOutput.hookEventName == "PreToolUse"
    unreadable = gate.rule("not json", lambda: ws)
    assert json.loads(encoded(unreadable))["decision"] == "ask"
    assert set(json.loads(encoded(answer))) == {"decision", "reason", "tool", "policy", "hookSpecificOutput"}
    ruling = Ruling("deny", "a policy forbids it", "Bash", "rm -rf build", policy="01abc")
    assert encoded(gate.answer(ruling)) == encoded(ruling.document())


def entity_of(event: object) -> str:
    return str(json.loads(encoded(event))["payload"]["entity"])


def test_work_show_and_parallel_encode_as_the_wiring_does(ws: Workspace) -> None:
    from service.core.commands.requests import Report
    from service.core.ledger import worksets

    one = entity_of(
        execute(ws, Add(text="parse", preset="work", criteria=("reads json",), writes=("src/",)))[0]
    )
    two = entity_of(execute(ws, Add(text="docs", preset="work", reads=("src/a.py",)))[0])
    execute(ws, Report(record=one, text="parsed", commit="abc1234"))
    assert encoded(queries.work_show(ws, one)) == encoded(ws.work_show(one))
    assert queries.work_show(ws, one).reports[0].commit == "abc1234"
    listed = queries.work_list(ws, True)
    assert encoded(listed) == encoded(ws.work_list(True))
    assert sorted(row.id for row in listed.units) == sorted([one, two])
    doc = queries.parallel(ws, [one, two])
    assert encoded(doc) == encoded(worksets.parallel(ws.state("demo"), [one, two]))
    assert not doc.commute and doc.conflicts[0].kind == "write/read"
