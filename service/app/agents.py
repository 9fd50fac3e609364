"""`self agent`: the hooks a coding agent runs, written into a checkout's agent settings and
taken out again, and the context its session starts with.

`install` merges (`service/core/agent/hooks.py`) into `.claude/settings.json`, never
clobbering a key, group or command of anyone else, and notes what it added in
`.claude/selfhub-hooks.json`; `uninstall` takes out exactly that. `session_context` is what
the session-start hook prints: the project's context from the service when the hook names
one (the workspace's URL there, the token from SELF_TOKEN or the credentials file), else
from the local store; it never fails the hook, it says what it could not read instead.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from service.core.agent import hooks as agent_hooks
from service.core.agent.hooks import Hook
from service.core.errors import Invalid

if TYPE_CHECKING:
    from collections.abc import Callable

    from service.app.workspace import Workspace

SETTINGS = Path(".claude") / "settings.json"
RECORD = Path(".claude") / "selfhub-hooks.json"
CONTEXT_TIMEOUT_S = 10.0


class Installed(msgspec.Struct, frozen=True):
    agent: str
    settings: str
    added: list[Hook]
    present: list[Hook]  # there already: left as they were


class Removed(msgspec.Struct, frozen=True):
    agent: str
    settings: str
    removed: list[Hook]


class _Record(msgspec.Struct):
    """What the installs in a checkout added, in order (each one's hooks and containers)."""

    installs: list[agent_hooks.Added] = msgspec.field(default_factory=list)


def install(agent: str, checkout: Path, service: str | None) -> Installed:
    _check_agent(agent)
    wanted = agent_hooks.claude_hooks(service)
    merged, added = agent_hooks.install(_settings(checkout), wanted)
    if added.hooks:
        _write(checkout / SETTINGS, json.dumps(merged, indent=2, ensure_ascii=False).encode() + b"\n")
        record = _record(checkout)
        record.installs.append(added)
        _write(checkout / RECORD, msgspec.json.format(msgspec.json.encode(record)) + b"\n")
    present = [h for h in wanted if h not in added.hooks]
    return Installed(agent, str(SETTINGS), added.hooks, present)


def uninstall(agent: str, checkout: Path) -> Removed:
    _check_agent(agent)
    record = _record(checkout)
    if record.installs:
        kept = _settings(checkout)
        for added in reversed(
            record.installs
        ):  # the last install first: it may sit in an earlier one's group
            kept = agent_hooks.uninstall(kept, added)
        _write(checkout / SETTINGS, json.dumps(kept, indent=2, ensure_ascii=False).encode() + b"\n")
    (checkout / RECORD).unlink(missing_ok=True)
    return Removed(agent, str(SETTINGS), [h for added in record.installs for h in added.hooks])


def session_context(service: str | None, project: str | None, local: Callable[[], Workspace]) -> str:
    """The context a session starts with: the service's when `service` is given and answers,
    else the local store's; a note of what could not be read, never an error."""
    notes: list[str] = []
    if service is not None:
        try:
            return _from_service(service, project)
        except (OSError, Invalid, ValueError) as exc:
            notes.append(f"(the service at {service} gave no context: {exc}; the local store's follows)")
    try:
        from service.app import queries, texts

        return "\n".join([*notes, texts.context(queries.context(local(), None), agent=True)])
    except Exception as exc:  # a hook must not fail the session: say what is missing
        notes.append(f"(no selfhub context: {exc})")
        return "\n".join(notes)


def _from_service(service: str, project: str | None) -> str:
    import httpx

    from service.adapters.sync import credentials

    base, workspace = agent_hooks.service_parts(service)
    if not project:
        raise Invalid("no project is selected here (SELF_PROJECT, or a checkout marked for one)")
    found = credentials.lookup(service)
    if found is None:
        raise Invalid("no token: set SELF_TOKEN (a reader token suffices)")
    path = f"{base}/api/v1/workspaces/{workspace}/projects/{project}/context"
    try:
        answer = httpx.get(
            path,
            params={"format": "plain"},
            headers={"Authorization": f"Bearer {found.token}"},
            timeout=CONTEXT_TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        raise OSError(f"unreachable ({type(exc).__name__})") from None
    if answer.status_code != 200:
        raise Invalid(f"HTTP {answer.status_code}")
    return answer.text


def _check_agent(agent: str) -> None:
    if agent not in agent_hooks.AGENTS:
        raise Invalid(f"no hooks for agent {agent!r}; known: {', '.join(agent_hooks.AGENTS)}", field="agent")


def _settings(checkout: Path) -> agent_hooks.Settings:
    path = checkout / SETTINGS
    try:
        found = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (ValueError, UnicodeDecodeError) as exc:
        why = f"{SETTINGS} is not JSON ({exc}); fix it first, nothing was changed"
        raise Invalid(why, field="settings") from None
    if not isinstance(found, dict):
        raise Invalid(f"{SETTINGS} is not a JSON object; fix it first, nothing was changed", field="settings")
    return found


def _record(checkout: Path) -> _Record:
    try:
        return msgspec.json.decode((checkout / RECORD).read_bytes(), type=_Record)
    except FileNotFoundError:
        return _Record()
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise Invalid(f"{RECORD} is unreadable; remove it and the hooks by hand", field="settings") from None


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(name, path)
