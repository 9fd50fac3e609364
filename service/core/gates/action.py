"""The action gate: a coding agent's pre-tool-use call in, `allow`, `deny` or `ask` out.

Policy records come first: current adopted decisions that carry a `gate` ruling for a tool
and a glob over the call's subject (a shell command, a file path), neither blocked nor
unsupported. Among the policies that match, deny beats ask beats allow. With no policy, the
threshold is reversibility: deleting or overwriting data, force-pushing or writing a shared
branch asks a person (`destructive` reads the shell command); an edit of a few lines passes
with a logged ruling; reads pass. Pure: the hook's JSON, the folded state and the facts the
shell read from the checkout (`questions`, `Checkout`) in, a ruling out. `policies` reads a
state's policy records once; `rule_by` rules on them (the store keeps them between calls:
`adapters/store/policies.py`, so a call needs no fold).
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

RULINGS = ("allow", "deny", "ask")
SMALL_EDIT_LINES = 200
_RANK = {"allow": 0, "ask": 1, "deny": 2}


class Policy(msgspec.Struct, frozen=True, array_like=True):
    """An applicable policy decision: its record, ruling, tool (None or "*": any), glob and text."""

    record: str
    ruling: str
    tool: str | None
    pattern: str
    text: str


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


def policies(state: State | None) -> list[Policy]:
    """Every applicable policy decision of `state`, in id order."""
    if state is None:
        return []
    candidates = [
        e
        for e in state.entities.values()
        if e.ledger is not None and e.ledger.gate in RULINGS and e.ledger.pattern and e.id in state.ledger
    ]
    if not candidates:
        return []
    from service.core.ledger import derived

    views = derived.derive(state, [e.id for e in candidates])
    found = []
    for e in sorted(candidates, key=lambda e: e.id):
        view = views[e.id]
        if view.current and view.state == "adopted" and not view.blocked and view.support != "unsupported":
            assert e.ledger is not None and e.ledger.gate is not None and e.ledger.pattern is not None
            found.append(Policy(e.id, e.ledger.gate, e.ledger.tool, e.ledger.pattern, e.text))
    return found


def rule(
    tool: str, tool_input: Mapping[str, Any], state: State | None, checkout: Checkout | None = None
) -> Ruling:
    """The ruling on one tool call under the policies of `state` (`rule_by`)."""
    return rule_by(tool, tool_input, policies(state), checkout)


def rule_by(
    tool: str, tool_input: Mapping[str, Any], found: list[Policy], checkout: Checkout | None = None
) -> Ruling:
    """The ruling on one tool call under the policies `found`, given the facts the shell read
    (`questions`) from the checkout it runs in; a fact not given counts against the call."""
    subject = subject_of(tool, tool_input)
    matching = [
        p
        for p in found
        if (p.tool in (None, "", "*") or p.tool == tool) and fnmatch.fnmatchcase(subject, p.pattern)
    ]
    if matching:
        policy = max(matching, key=lambda p: _RANK[p.ruling])
        reason = f"policy {policy.record}: {policy.text}"
        return Ruling(policy.ruling, reason, tool, subject, policy=policy.record)
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
