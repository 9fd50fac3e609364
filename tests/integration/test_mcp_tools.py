"""The tool table (`service/app/tools.py`) on a real store: each kind a record tool takes is the
CLI verb's record, the ledger's links, a record found by its id from any project, and every
bad call refused with the argument it names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from service.app import locate, tools
from service.core.errors import Invalid, SelfhubError
from tests.support.selfrun import base_env, describe, run_self


@pytest.fixture
def root(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    env = base_env()
    for args in (("init", str(store)), ("project", "add", "app"), ("project", "add", "api")):
        done = run_self(args, env | {"SELF_WORKSPACE": str(store)})
        assert done.returncode == 0, describe(done)
    return store


def ask(root: Path, name: str, selected: str | None = None, **arguments: object) -> str:
    """The tool's answer on the store, `selected` the project `self` would select."""
    call = tools.parse(name, arguments)
    return tools.answer(locate(str(root), call.project or selected), call)


def recorded(text: str) -> str:
    found = re.match(r"\S+ (\w+)", text)
    assert found, text
    return found[1]


def test_each_kind_is_the_cli_verbs_record(root: Path) -> None:
    labels = {"decision": "decision"} | {kind: kind for kind in tools.KINDS if kind != "decision"}
    for kind, label in labels.items():
        text = "Which port?" if kind == "question" else f"a {kind}"
        shown = ask(root, "show", id=recorded(ask(root, "record", project="app", kind=kind, text=text)))
        assert shown.splitlines()[0].split("  ")[1] == f"[{label}]", shown


def test_the_ledgers_links(root: Path) -> None:
    claim = recorded(ask(root, "record", project="app", kind="claim", text="Port 8765 is free"))
    decision = recorded(
        ask(root, "record", project="app", kind="decision", text="Serve on 8765", supports=[claim])
    )
    question = recorded(ask(root, "record", project="app", kind="question", text="Which port?"))
    answer = ask(root, "record", project="app", kind="claim", text="8765", answers=[question])
    assert "entity.confirmed" in answer
    newer = ask(
        root,
        "record",
        project="app",
        kind="decision",
        text="Serve on 8766",
        supersedes=decision,
        supersede_reason="revise",
        why="8765 was taken",
    )
    shown = ask(root, "show", id=decision)
    assert recorded(newer) in shown and "supersed" in shown
    assert claim[:8] in ask(root, "show", id=decision)


def test_a_record_is_found_by_its_id_from_any_project(root: Path) -> None:
    unit = recorded(ask(root, "record", project="api", kind="work", text="Add the endpoint"))
    started = ask(root, "work", selected="app", id=unit[:10], action="start")  # app is selected
    assert started.startswith(f"entity.started {unit}")
    assert "Add the endpoint" in ask(root, "show", selected="app", id=unit[:10])


def test_a_report_needs_its_text(root: Path) -> None:
    unit = recorded(ask(root, "record", project="app", kind="work", text="Write the docs"))
    with pytest.raises(Invalid, match="text"):
        ask(root, "work", id=unit, action="report")


@pytest.mark.parametrize(
    ("name", "arguments", "named"),
    [
        ("publish", {}, "publish"),
        ("context", {}, "project"),
        ("context", {"project": "app", "budget": "big"}, "budget"),
        ("search", {"query": "x", "limit": 3}, "limit"),
        ("record", {"project": "app", "kind": "memo", "text": "t"}, "kind"),
        ("work", {"id": "01", "action": "finish"}, "action"),
        ("review", {"id": "01", "state": "fine"}, "state"),
    ],
)
def test_a_bad_call_names_what_is_wrong(name: str, arguments: dict[str, object], named: str) -> None:
    with pytest.raises(SelfhubError, match=named):
        tools.parse(name, arguments)


def test_each_schema_is_its_structs_fields() -> None:
    import msgspec

    listed = tools.listing()
    assert len(listed) <= 8
    assert len(json.dumps({"tools": listed})) <= 6000
    for tool, shown in zip(tools.TOOLS, listed, strict=True):
        info = msgspec.inspect.type_info(tool.args)
        assert isinstance(info, msgspec.inspect.StructType)
        assert list(shown["inputSchema"]["properties"]) == [f.encode_name for f in info.fields]
        assert shown["inputSchema"]["required"] == [f.encode_name for f in info.fields if f.required]
