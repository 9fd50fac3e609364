"""`self gate`: a coding agent's pre-tool-use call, ruled allow, deny or ask from the ledger's
policy decisions and the call's reversibility, and logged in the workspace when there is one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from service.app.workspace import Workspace
    from service.core.gates.action import Policy, Ruling


class HookOutput(msgspec.Struct, frozen=True):
    """Claude Code's hook output keys."""

    hookEventName: str  # the hook contract's spelling
    permissionDecision: str
    permissionDecisionReason: str


class GateAnswer(msgspec.Struct, frozen=True):
    """What the hook prints: the ruling's keys and Claude Code's hook output."""

    decision: str
    reason: str
    tool: str
    policy: str | None
    hookSpecificOutput: HookOutput


def answer(ruling: Ruling) -> GateAnswer:
    """The model's hook document (`Ruling.document`), typed."""
    return msgspec.convert(ruling.document(), GateAnswer)


def rule(text: str, locate: Callable[[], Workspace]) -> GateAnswer:
    """The gate's answer to the hook JSON `text`; it never fails the hook: an unreadable call
    is asked about, and with no store or project here reversibility alone decides."""
    from pathlib import Path

    from service.adapters import checkout
    from service.core.errors import Invalid
    from service.core.gates import action as gate

    try:
        tool, tool_input, cwd = gate.parse(text)
    except Invalid as exc:
        return answer(gate.Ruling("ask", f"{exc}; a person decides", "?", ""))
    ws = None
    try:
        ws = locate()
        found = _policies(ws)
    except Exception:  # no store or project here: reversibility alone decides
        found = []
    facts = checkout.facts(Path(cwd or "."), gate.questions(tool, tool_input))
    ruling = gate.rule_by(tool, tool_input, found, facts)
    if ws is not None:
        ws.log_ruling(ruling.document() | {"subject": ruling.subject})
    return answer(ruling)


def _policies(ws: Workspace) -> list[Policy]:
    """The project's applicable policies: from the policy cache of a store on disk when its
    logs end where they did, else folded (and kept for the next call)."""
    from service.adapters.store import Store, policies

    if not ws.project:
        return []
    if not isinstance(ws.store, Store):
        return _folded(ws, ws.project)
    root = ws.store.root
    cached = policies.read(root, ws.project)
    if cached is not None:
        return cached
    before = policies.ends(root, ws.project)
    found = _folded(ws, ws.project)
    policies.keep(root, ws.project, found, before)
    return found


def _folded(ws: Workspace, project: str) -> list[Policy]:
    """The policies of `project`'s state; none when the workspace log knows no such project."""
    from service.core.events.events import WORKSPACE_LOG
    from service.core.gates import action

    # the projects from the workspace log's state, not its hot slice: the call stays
    # clear of the slice's SQLite table, and the workspace log is small
    if project not in ws.state(WORKSPACE_LOG).projects:
        return []
    return action.policies(ws.state(project))
