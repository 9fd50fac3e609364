"""The action gate: a coding agent's pre-tool-use call in, `allow`, `deny` or `ask` out.

Policy records come first: current adopted decisions that carry a `gate` ruling for a tool
and a glob over the call's subject (a shell command, a file path), neither blocked nor
unsupported. Among the policies that match, deny beats ask beats allow. With no policy, the
threshold is reversibility: deleting or overwriting data, force-pushing or writing a shared
branch asks a person (`destructive` reads the shell command); an edit of a few lines passes
with a logged ruling; reads pass. Pure: the hook's JSON, the folded state and the facts the
shell read from the checkout (`questions`, `Checkout`) in, a ruling out.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping
from typing import Any

import msgspec

from service.core.errors import Invalid
from service.core.fold.state import State
from service.core.gates import destructive
from service.core.gates.destructive import Checkout, Questions
from service.core.ledger import derived

RULINGS = ("allow", "deny", "ask")
SMALL_EDIT_LINES = 200
_RANK = {"allow": 0, "ask": 1, "deny": 2}


class Ruling(msgspec.Struct, frozen=True):
    decision: str
    reason: str
    tool: str
    subject: str
    policy: str | None = None
    logged: bool = False

    def document(self) -> dict[str, Any]:
        """The JSON the hook prints: the contract's keys and Claude Code's hook output."""
        return {
            "decision": self.decision,
            "reason": self.reason,
            "tool": self.tool,
            "policy": self.policy,
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": self.decision,
                "permissionDecisionReason": self.reason,
            },
        }


def subject_of(tool: str, tool_input: Mapping[str, Any]) -> str:
    """What a call is about: the shell command, the file path, or the input as JSON."""
    for key in ("command", "file_path", "notebook_path", "path", "url", "pattern"):
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
    return json.dumps(tool_input, sort_keys=True)


def parse(text: str) -> tuple[str, Mapping[str, Any], str | None]:
    """The tool name, its input and the directory the call runs in (the hook's `cwd`, when
    given) from a pre-tool-use hook's JSON."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise Invalid(f"the hook input is not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise Invalid("the hook input is not a JSON object")
    tool = data.get("tool_name") or data.get("tool")
    tool_input = data.get("tool_input") or data.get("input") or {}
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        raise Invalid("the hook input names no tool_name and tool_input")
    cwd = data.get("cwd")
    return tool, tool_input, cwd if isinstance(cwd, str) and cwd else None


def questions(tool: str, tool_input: Mapping[str, Any]) -> Questions:
    """The checkout facts the ruling on this call depends on, for the shell to read."""
    return destructive.questions(subject_of(tool, tool_input)) if tool == "Bash" else Questions()


def policies(state: State | None) -> list[tuple[str, str, str | None, str]]:
    """(record, ruling, tool, pattern) of every applicable policy decision, in id order."""
    if state is None:
        return []
    candidates = [
        e
        for e in state.entities.values()
        if e.ledger is not None and e.ledger.gate in RULINGS and e.ledger.pattern and e.id in state.ledger
    ]
    if not candidates:
        return []
    views = derived.derive(state, [e.id for e in candidates])
    found = []
    for e in sorted(candidates, key=lambda e: e.id):
        view = views[e.id]
        if view.current and view.state == "adopted" and not view.blocked and view.support != "unsupported":
            assert e.ledger is not None and e.ledger.gate is not None and e.ledger.pattern is not None
            found.append((e.id, e.ledger.gate, e.ledger.tool, e.ledger.pattern))
    return found


def rule(
    tool: str, tool_input: Mapping[str, Any], state: State | None, checkout: Checkout | None = None
) -> Ruling:
    """The ruling on one tool call, given the facts the shell read (`questions`) from the
    checkout it runs in; a fact not given counts against the call."""
    subject = subject_of(tool, tool_input)
    matching = [
        (record, ruling)
        for record, ruling, policy_tool, pattern in policies(state)
        if (policy_tool in (None, "", "*") or policy_tool == tool) and fnmatch.fnmatchcase(subject, pattern)
    ]
    if matching:
        record, ruling = max(matching, key=lambda m: _RANK[m[1]])
        text = state.entities[record].text if state is not None else record
        return Ruling(ruling, f"policy {record}: {text}", tool, subject, policy=record)
    return _by_reversibility(tool, tool_input, subject, checkout or Checkout())


def _by_reversibility(tool: str, tool_input: Mapping[str, Any], subject: str, checkout: Checkout) -> Ruling:
    if tool == "Bash":
        why = destructive.reason(subject, checkout)
        if why is not None:
            return Ruling("ask", f"{why}; a person decides", tool, subject)
        return Ruling("allow", "no policy applies and the command deletes nothing shared", tool, subject)
    if tool in ("Edit", "MultiEdit", "Write", "NotebookEdit"):
        lines = _edited_lines(tool_input)
        if lines <= SMALL_EDIT_LINES:
            return Ruling(
                "allow",
                f"a small edit ({lines} lines): reversible; ruling logged",
                tool,
                subject,
                logged=True,
            )
        return Ruling("ask", f"a large edit ({lines} lines); a person decides", tool, subject)
    return Ruling("allow", "no policy applies; the call changes nothing", tool, subject)


def _edited_lines(tool_input: Mapping[str, Any]) -> int:
    texts: list[str] = []
    for key in ("content", "old_string", "new_string", "new_source"):
        value = tool_input.get(key)
        if isinstance(value, str):
            texts.append(value)
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        for edit in edits:
            if isinstance(edit, dict):
                texts += [
                    v for k, v in edit.items() if k in ("old_string", "new_string") and isinstance(v, str)
                ]
    return sum(t.count("\n") + 1 for t in texts if t)
