"""The action gate: policy decisions by tool and pattern first (deny > ask > allow), then
reversibility: deleting data, force-pushing or writing a shared branch asks a person."""

from __future__ import annotations

import json
from typing import Any

import pytest

from service.core.errors import Invalid
from service.core.gates import action as gate
from tests.unit.test_ledger import Book


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return "Bash", {"command": command}


@pytest.mark.parametrize(
    ("call", "decision"),
    [
        (bash("rm -rf build"), "ask"),
        (bash("cd x && rm -r data"), "ask"),
        (bash("git clean -fdx"), "ask"),
        (bash("git reset --hard HEAD~1"), "ask"),
        (bash("psql -c 'DROP TABLE users'"), "ask"),
        (bash("git push --force origin feature"), "ask"),
        (bash("git push -f"), "ask"),
        (bash("git push origin +feature"), "ask"),
        (bash("git push origin main"), "ask"),
        (bash("git push origin HEAD:master"), "ask"),
        (bash("git push origin feature/x"), "allow"),
        (bash("pytest -q"), "allow"),
        (bash("rm notes.txt"), "ask"),
        (bash("cat notes.txt"), "allow"),
        (("Edit", {"file_path": "src/a.py", "old_string": "a", "new_string": "b"}), "allow"),
        (("Write", {"file_path": "big.py", "content": "x\n" * 500}), "ask"),
        (("MultiEdit", {"file_path": "a.py", "edits": [{"old_string": "a", "new_string": "b"}]}), "allow"),
        (("Read", {"file_path": "src/a.py"}), "allow"),
    ],
)
def test_reversibility_decides_without_a_policy(call: tuple[str, dict[str, Any]], decision: str) -> None:
    ruling = gate.rule(*call, None)
    assert ruling.decision == decision, ruling.reason
    assert ruling.document()["hookSpecificOutput"]["permissionDecision"] == decision
    if call[0] == "Edit":
        assert ruling.logged and "ruling logged" in ruling.reason


def test_policies_decide_first_and_deny_beats_ask_beats_allow() -> None:
    book = Book()
    allow = book.decision("agents may push feature branches", gate="allow", tool="Bash", pattern="git push*")
    deny = book.decision("never force-push", gate="deny", tool="Bash", pattern="git push*--force*")
    book.decision("ask before touching migrations", gate="ask", pattern="migrations/*")
    state = book.state()
    assert gate.rule(*bash("git push origin main"), state).policy == allow
    forced = gate.rule(*bash("git push origin main --force"), state)
    assert (forced.decision, forced.policy) == ("deny", deny)
    assert "never force-push" in forced.reason
    assert gate.rule("Edit", {"file_path": "migrations/001.sql"}, state).decision == "ask"
    book.revoke(deny)
    assert gate.rule(*bash("git push origin main --force"), book.state()).decision == "allow"


def test_a_blocked_policy_does_not_apply() -> None:
    book = Book()
    c = book.claim("the release is frozen", state="disputed")
    book.decision("no pushes during the freeze", gate="deny", pattern="git push*", depends_on=c)
    assert gate.rule(*bash("git push origin feature"), book.state()).decision == "allow"
    book.assess(c, "accepted")
    assert gate.rule(*bash("git push origin feature"), book.state()).decision == "deny"


def test_policy_fields_are_checked() -> None:
    book = Book()
    with pytest.raises(Invalid, match="not one of allow, deny, ask"):
        book.decision("x", gate="maybe", pattern="*")
    with pytest.raises(Invalid, match="gate and pattern together"):
        book.decision("x", gate="deny")
    with pytest.raises(Invalid, match="make a policy decision"):
        book.claim("x holds", gate="deny", pattern="*")


def test_hook_input_is_parsed() -> None:
    hook = {
        "session_id": "s",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }
    assert gate.parse(json.dumps(hook)) == ("Bash", {"command": "ls"}, None)
    assert gate.parse(json.dumps(hook | {"cwd": "/src/app"}))[2] == "/src/app"
    with pytest.raises(Invalid, match="not JSON"):
        gate.parse("nope")
    with pytest.raises(Invalid, match="no tool_name"):
        gate.parse("{}")
