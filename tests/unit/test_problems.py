"""Every error code maps to an exit code and an HTTP status; the model's messages name no
front end (no `--flag`, no `self …` command), nor do the store's and sync's; the CLI renders a
field as its flag and adds its hints."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cli.problems import HINTS, flag, message
from service.core.commands import commands
from service.core.commands.commands import Clock
from service.core.commands.config import WorkspaceConfig
from service.core.errors import Invalid, Refused
from service.core.events import ids
from service.core.events.events import Origin
from service.core.ledger import ledger
from service.core.problems import BAD_INPUT, CODES, NOT_STARTED, REFUSED, document
from tests.support.builders import Log

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "service" / "core"
FRONT_END = re.compile(r"--[a-z]|`self ")


def _sources(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def _code_literals(tree: ast.AST) -> list[tuple[str, str]]:
    """(call or class, code) for every `code="…"` keyword and `code = "…"` class attribute."""
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            for kw in node.keywords:
                if (
                    kw.arg == "code"
                    and isinstance(kw.value, ast.Constant)
                    and isinstance(kw.value.value, str)
                ):
                    found.append((name, kw.value.value))
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            named = isinstance(target, ast.Name) and target.id in ("code", "default_code")
            if named and isinstance(node.value, ast.Constant):
                found.append(("class", str(node.value.value)))
    return found


def test_every_code_has_an_exit_code_and_an_http_status() -> None:
    for code, row in CODES.items():
        assert row.exit in (BAD_INPUT, REFUSED) or (code, row.exit) == ("not-listening", NOT_STARTED), code
        assert 400 <= row.status <= 599, code
        doc = document(code, "what went wrong", "budget")
        assert doc["status"] == row.status and doc["code"] == code and doc["field"] == "budget"
        assert str(doc["type"]).endswith(code) and doc["title"]


def test_every_hint_of_the_cli_is_for_a_code_in_the_table() -> None:
    assert {code for code, _ in HINTS} <= set(CODES)


def test_every_code_raised_is_in_the_table() -> None:
    raised = [
        (path.relative_to(ROOT), name, code)
        for path in _sources(ROOT / "service")
        for name, code in _code_literals(ast.parse(path.read_text()))
    ]
    assert raised, "the scan found no codes"
    unknown = [item for item in raised if item[2] not in CODES]
    assert not unknown
    # an Invalid is bad input (exit 1), a Refused a rule's no (exit 2)
    for _, name, code in raised:
        if name == "Invalid":
            assert CODES[code].exit == BAD_INPUT, code
        if name == "Refused":
            assert CODES[code].exit == REFUSED, code


def _strings(node: ast.AST) -> list[str]:
    return [c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str)]


def _raised_strings(tree: ast.AST) -> list[str]:
    """The string parts of every raised error, every error built to be raised (`return
    Invalid(…)`), the completion gate's reasons and the ledger's objections."""
    texts: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            texts += _strings(node.exc)
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Call):
            name = getattr(node.value.func, "id", "")
            texts += _strings(node.value) if name in ("Invalid", "Refused") else []
        if isinstance(node, ast.FunctionDef) and node.name in ("ruling", "objections"):
            texts += _strings(node)
    return texts


def test_no_model_message_names_a_flag_or_a_command() -> None:
    offenders = [
        f"{path.name}: {text!r}"
        for path in _sources(MODEL)
        if path.name not in ("destructive.py", "shellcmd.py")  # they read other tools' flags
        for text in _raised_strings(ast.parse(path.read_text()))
        if FRONT_END.search(re.sub(r'"[^"]*"', "", text))  # a quoted example may hold any flag
    ]
    assert not offenders, "\n".join(offenders)


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _front_end_strings(paths: list[Path]) -> list[str]:
    """Every string of `paths` (docstrings aside) that names a `--flag` or a `self …` command."""
    found = []
    for path in paths:
        tree = ast.parse(path.read_text())
        skip = _docstrings(tree)
        found += [
            f"{path.name}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            if FRONT_END.search(node.value)
        ]
    return found


def test_no_application_message_names_a_flag_or_a_command() -> None:
    """The wiring and the application layer answer the HTTP service too; `texts.py` is the text
    render of the CLI's documents, which may name its commands."""
    app = [p for p in _sources(ROOT / "service" / "app") if p.name != "texts.py"]
    assert ROOT / "service" / "app" / "workspace.py" in app
    offenders = _front_end_strings(app)
    assert not offenders, "\n".join(offenders)


def test_no_adapter_message_names_a_flag_or_a_command() -> None:
    """The store, sync, the data directory and auth answer the HTTP service and its mirrors
    too: every string they hold (docstrings aside) is free of `--flags` and `self …`
    commands; the CLI adds its own."""
    adapters = [_sources(ROOT / "service" / "adapters" / name) for name in ("store", "sync", "data", "auth")]
    assert all(adapters), "an adapter's folder moved: this test reads none of its files"
    offenders = _front_end_strings([path for paths in adapters for path in paths])
    assert not offenders, "\n".join(offenders)


def test_the_cli_words_a_store_or_sync_error_with_its_flags_commands_and_hint() -> None:
    from cli.problems import adapter_message
    from service.adapters.sync.errors import KeptMoving, RemoteExists, Unreachable
    from service.adapters.sync.identity import EventsDiffer

    taken = RemoteExists("a remote named 'origin' exists already (/srv/hub.git)", name="origin")
    assert adapter_message(taken) == (
        "a remote named 'origin' exists already (/srv/hub.git); "
        "`self remote remove origin` first, or pick another --name"
    )
    slow = Unreachable("no answer within 5 s (raise it with {timeout} or SELF_SYNC_TIMEOUT)", field="timeout")
    assert str(slow) == "no answer within 5 s (raise it with timeout or SELF_SYNC_TIMEOUT)"
    assert adapter_message(slow) == "no answer within 5 s (raise it with --timeout or SELF_SYNC_TIMEOUT)"
    moving = KeptMoving("hub kept moving. Nothing is lost (the events stay in the local store)")
    assert adapter_message(moving).endswith("local store); run `self sync` again, or raise --tries")
    differ = EventsDiffer(["01kdvdna0419epqammaqhye1m2"])
    assert "; doctor lists them." in str(differ)
    assert "; `self doctor` lists them." in adapter_message(differ)


def test_refusals_carry_a_code_and_the_field_they_concern() -> None:
    log = Log()
    goal = log.entity("ship it", "goal", exposure="full")
    state = log.state()
    clock = Clock(log.next_id, "2026-11-30T11:00:00.000Z", Origin("human", True), "app")
    with pytest.raises(Invalid) as missing:
        commands.find(state, "0zzz")
    assert (missing.value.code, missing.value.field) == ("not-found", "record")
    with pytest.raises(Invalid) as why:
        commands.place(state, WorkspaceConfig(), clock, goal, exposure="search")
    assert (why.value.code, why.value.field) == ("missing-value", "why")
    with pytest.raises(Refused) as evidence:
        commands.done(state, clock, goal)
    assert (evidence.value.code, evidence.value.field) == ("evidence-required", "report")
    with pytest.raises(Invalid) as target:
        commands.link(state, clock, goal, "relates", "0zzz", remove=False)
    assert (target.value.code, target.value.field) == ("not-found", "target")
    with pytest.raises(Invalid) as ambiguous:
        ids.resolve("01", ["01aa", "01ab"])
    assert (ambiguous.value.code, ambiguous.value.field) == ("ambiguous-prefix", "record")
    with pytest.raises(Invalid) as options:
        ledger.parse_option("no equals sign")
    assert options.value.field == "options" and "--" not in str(options.value)


def test_the_cli_renders_fields_as_flags_and_adds_its_hints() -> None:
    assert flag("cost_if_wrong") == "--cost-if-wrong" and flag("applies_to") == "--scope"
    error = Invalid("a demotion records why: pass {why}", code="missing-value", field="why")
    assert str(error) == "a demotion records why: pass why"
    assert message(error) == "a demotion records why: pass --why"
    unknown = Invalid("no record has an id starting with 'x'", code="not-found", field="record")
    assert message(unknown).endswith("; `self state list --all` lists ids")
    person = Refused("a person's call: use {proposed}", code="person-required", field="proposed", id="01ab")
    assert message(person) == "a person's call: use --proposed with `self state confirm 01ab`"


def test_an_http_front_end_answers_a_problem_document() -> None:
    from service.adapters.store.errors import StoreLocked
    from service.app import problem

    refused = problem(Invalid("{budget} 5: give a token budget from 100", field="budget"))
    assert refused == {
        "type": "urn:selfhub:problem:invalid-value",
        "title": CODES["invalid-value"].title,
        "status": 422,
        "detail": "budget 5: give a token budget from 100",
        "code": "invalid-value",
        "field": "budget",
    }
    locked = problem(StoreLocked("lock", 1.0))
    assert locked is not None and locked["status"] == 503 and locked["code"] == "store-locked"
    assert problem(RuntimeError("a bug")) is None
