"""The hooks a coding agent runs, merged into its settings document and taken out again.

Pure: a settings document (decoded JSON) in, a settings document out. `install` adds each
hook its event and matcher lack and says which it added; `uninstall` takes out exactly
those, leaving every other key, group and command as it was, and drops a group, an event or
the `hooks` key only when removing ours left it empty.
"""

from __future__ import annotations

import copy
import re
import shlex

import msgspec

from service.core.errors import Invalid

Settings = dict[str, object]
AGENTS = ("claude",)
SERVICE_URL = re.compile(
    r"(?P<scheme>https?)://(?P<host>[^/\s]+)/git/(?P<workspace>[a-z0-9][a-z0-9-]{0,62})\.git"
)


class Hook(msgspec.Struct, frozen=True):
    """One command for one event; `matcher` None for an event that takes none."""

    event: str
    matcher: str | None
    command: str


def claude_hooks(service: str | None) -> list[Hook]:
    """Claude Code's: the project's context at session start, `self gate` before each tool."""
    context = "self agent context"
    if service is not None:
        context += f" --service {shlex.quote(check_service(service))}"
    return [Hook("SessionStart", None, context), Hook("PreToolUse", "*", "self gate")]


def check_service(url: str) -> str:
    """A workspace's URL on a service (`http(s)://host[:port]/git/WS.git`), without credentials."""
    found = SERVICE_URL.fullmatch(url)
    if found is None:
        raise Invalid(
            f"{url!r} is not a workspace's URL on a service: give the one a sync uses, "
            "http://HOST:PORT/git/WS.git",
            field="service",
        )
    if "@" in found["host"]:
        raise Invalid("the service URL must not hold credentials: the hook reads SELF_TOKEN", field="service")
    return url


def service_parts(url: str) -> tuple[str, str]:
    """The service's base URL and the workspace's name, of a URL `check_service` takes."""
    found = SERVICE_URL.fullmatch(check_service(url))
    assert found is not None
    return f"{found['scheme']}://{found['host']}", found["workspace"]


class Added(msgspec.Struct, frozen=True):
    """What `install` changed: the hooks it added and the containers it made for them
    (`hooks`, an event's list, `EVENT|MATCHER` for a group), which alone `uninstall` may drop."""

    hooks: list[Hook]
    made: list[str]


def install(settings: Settings, hooks: list[Hook]) -> tuple[Settings, Added]:
    """`settings` with each hook added where its event and matcher lack its command, and what
    was added (no hook when every one was there already)."""
    merged = copy.deepcopy(settings)
    made: list[str] = [] if "hooks" in merged else ["hooks"]
    events = _mapping(merged.setdefault("hooks", {}), "hooks")
    added: list[Hook] = []
    for hook in hooks:
        if hook.event not in events:
            made.append(hook.event)
        groups = _list(events.setdefault(hook.event, []), f"hooks.{hook.event}")
        group = _group(groups, hook.matcher)
        if group is None:
            group = {"hooks": []} if hook.matcher is None else {"matcher": hook.matcher, "hooks": []}
            groups.append(group)
            made.append(_key(hook))
        entries = _list(group.setdefault("hooks", []), f"hooks.{hook.event}[].hooks")
        if not any(isinstance(e, dict) and e.get("command") == hook.command for e in entries):
            entries.append({"type": "command", "command": hook.command})
            added.append(hook)
    if not added:
        return settings, Added([], [])
    return merged, Added(added, made)


def uninstall(settings: Settings, added: Added) -> Settings:
    """`settings` without what `install` added."""
    kept = copy.deepcopy(settings)
    events = kept.get("hooks")
    if not isinstance(events, dict):
        return kept
    for hook in added.hooks:
        groups = events.get(hook.event)
        if not isinstance(groups, list):
            continue
        group = _group(groups, hook.matcher)
        if group is None or not isinstance(group.get("hooks"), list):
            continue
        entries = _list(group["hooks"], "hooks")
        for n, entry in enumerate(entries):
            if isinstance(entry, dict) and entry.get("command") == hook.command:
                del entries[n]
                break
        if not entries and set(group) <= {"hooks", "matcher"} and _key(hook) in added.made:
            groups.remove(group)
        if not groups and hook.event in added.made:
            del events[hook.event]
    if not events and "hooks" in added.made:
        del kept["hooks"]
    return kept


def _key(hook: Hook) -> str:
    return f"{hook.event}|{hook.matcher}"


def _group(groups: list[object], matcher: str | None) -> dict[str, object] | None:
    for group in groups:
        if isinstance(group, dict) and group.get("matcher") == matcher:
            return group
    return None


def _mapping(value: object, where: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise Invalid(f"{where} in the agent's settings is not an object; fix it first", field="settings")
    return value


def _list(value: object, where: str) -> list[object]:
    if not isinstance(value, list):
        raise Invalid(f"{where} in the agent's settings is not a list; fix the file first", field="settings")
    return value
