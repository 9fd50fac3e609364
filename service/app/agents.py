"""`self agent`: what coding agents read to work with selfhub, written into a checkout (and
the agent's own config) and taken out again, and the context its session starts with.

`install` per agent: Claude Code's hooks (merged by `service/core/agent/hooks.py` into
`.claude/settings.json`) and its `.mcp.json` server; Codex's managed block in AGENTS.md and
its server in ~/.codex/config.toml; Cursor's `.cursor/mcp.json` server and its rule file
holding the block; `mcp` only prints a generic client's config. Each notes what it added in a
record (`installers.py`), which `uninstall` reads to take out exactly that; installing again
first takes out what the last install added, so nothing is there twice. What the session-start
hook prints (`session_context`) is `sessions.py`'s, which imports none of the installers.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from service.app import blocks, installers
from service.app.installers import BlockAdded, Record
from service.app.sessions import Source as Source  # re-exported for the CLI
from service.app.sessions import newer_notes as newer_notes
from service.app.sessions import read_conventions as read_conventions
from service.app.sessions import refresh_blocks as refresh_blocks
from service.app.sessions import session_context as session_context
from service.core.agent import clients
from service.core.agent import hooks as agent_hooks
from service.core.agent.hooks import Hook
from service.core.errors import Invalid

SETTINGS = Path(".claude") / "settings.json"
RECORD = Path(".claude") / "selfhub-hooks.json"
RECORDS = {
    "claude": RECORD,
    "codex": Path(".codex") / "selfhub-install.json",
    "cursor": Path(".cursor") / "selfhub-install.json",
}
AGENTS = ("claude", "codex", "cursor", "mcp")


class Installed(msgspec.Struct, frozen=True):
    agent: str
    settings: str
    added: list[Hook]
    present: list[Hook]  # there already: left as they were
    files: list[str] = msgspec.field(default_factory=list)  # the files written
    notes: list[str] = msgspec.field(default_factory=list)
    config: dict[str, object] | None = None  # `mcp`: the client config to paste


class Removed(msgspec.Struct, frozen=True):
    agent: str
    settings: str
    removed: list[Hook]
    files: list[str] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)


def install(agent: str, checkout: Path, service: str | None, source: Source | None = None) -> Installed:
    _check_agent(agent)
    if service is not None:
        clients.mcp_url(service)
        if agent == "claude":
            agent_hooks.check_service(service)
    if agent == "mcp":
        return Installed(agent, "", [], [], config=clients.generic(service))
    path = checkout / RECORDS[agent]
    previous = installers.read_record(path)
    if previous.installs or previous.server or previous.created:
        _take_out(agent, checkout, previous, keep_block=True)
    record = Record(block=previous.block, created=installers.still_made(previous, checkout))
    found, notes = _conventions(source)
    done = {"claude": _claude, "codex": _codex, "cursor": _cursor}[agent](checkout, service, record, found)
    files = [*done.files, *(w.file for w in _refreshed(checkout, found))]
    installers.write_record(path, record, checkout)
    was = {h for added in previous.installs for h in added.hooks}
    added = [h for h in done.added if h not in was]
    return Installed(
        agent,
        done.settings,
        added,
        done.present + [h for h in done.added if h in was],
        sorted(set(files)),
        notes + done.notes,
    )


def uninstall(agent: str, checkout: Path) -> Removed:
    _check_agent(agent)
    if agent == "mcp":
        printed = "the generic MCP client's entry is printed, never written: nothing to take out"
        return Removed(agent, "", [], notes=[printed])
    record = installers.read_record(checkout / RECORDS[agent])
    notes = _take_out(agent, checkout, record, keep_block=False)
    files = [f for f in (record.server and record.server.file, record.block and record.block.file) if f]
    if record.installs:
        files.append(str(SETTINGS))
    hooks = [h for added in record.installs for h in added.hooks]
    return Removed(agent, _main_file(agent), hooks, files, notes)


def _main_file(agent: str) -> str:
    return {"claude": str(SETTINGS), "codex": "AGENTS.md", "cursor": str(blocks.RULES)}[agent]


class _Done(msgspec.Struct):
    settings: str
    added: list[Hook] = msgspec.field(default_factory=list)
    present: list[Hook] = msgspec.field(default_factory=list)
    files: list[str] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)


def _claude(checkout: Path, service: str | None, record: Record, found: list[str] | None) -> _Done:
    wanted = agent_hooks.claude_hooks(service)
    text = installers.read_text(checkout / SETTINGS)
    merged, added = agent_hooks.install(_settings(text), wanted)
    done = _Done(str(SETTINGS), added.hooks, [h for h in wanted if h not in added.hooks])
    if added.hooks:
        installers.make_parents(checkout / SETTINGS, checkout, record)
        if not (checkout / SETTINGS).exists():
            record.created.append(str(SETTINGS))
        installers.write(checkout / SETTINGS, _json_text(text, merged))
        record.installs.append(added)
        done.files.append(str(SETTINGS))
    if installers.add_json_server(
        checkout / ".mcp.json", clients.NAME, clients.claude(service), checkout, record
    ):
        done.files.append(".mcp.json")
    return done


def _codex(checkout: Path, service: str | None, record: Record, found: list[str] | None) -> _Done:
    done = _Done("AGENTS.md")
    config = _codex_home() / "config.toml"
    if installers.add_toml_table(config, clients.NAME, clients.codex(service), checkout, record):
        done.files.append(installers.named(config, checkout))
    if found is None and blocks.holds(checkout / "AGENTS.md"):
        return done  # its conventions are not known here: the block stays as it is
    written = blocks.write(checkout / "AGENTS.md", blocks.project_block(found or []))
    if written is not None and record.block is None and written.action in ("created", "appended"):
        record.block = BlockAdded("AGENTS.md", written.separator, written.action == "created")
    done.files.append("AGENTS.md")
    done.notes += newer_notes([written])
    return done


def _cursor(checkout: Path, service: str | None, record: Record, found: list[str] | None) -> _Done:
    done = _Done(str(blocks.RULES))
    if installers.add_json_server(
        checkout / ".cursor" / "mcp.json", clients.NAME, clients.cursor(service), checkout, record
    ):
        done.files.append(".cursor/mcp.json")
    rules = checkout / blocks.RULES
    text = blocks.project_block(found or [])
    if not rules.exists():
        installers.make_parents(rules, checkout, record)
        installers.write(rules, clients.rules(text))
        record.block = BlockAdded(str(blocks.RULES), "", created=True)
    elif found is not None or not blocks.holds(rules):
        written = blocks.write(rules, text)
        if written is not None and record.block is None and written.action == "appended":
            record.block = BlockAdded(str(blocks.RULES), written.separator, created=False)
        done.notes += newer_notes([written])
    done.files.append(str(blocks.RULES))
    return done


def _take_out(agent: str, checkout: Path, record: Record, keep_block: bool) -> list[str]:
    """Undo what `record` says an install added; the block too unless `keep_block`."""
    notes: list[str] = []
    if record.installs:
        text = installers.read_text(checkout / SETTINGS)
        kept = _settings(text)
        for added in reversed(
            record.installs
        ):  # the last install first: it may sit in an earlier one's group
            kept = agent_hooks.uninstall(kept, added)
        if not kept and str(SETTINGS) in record.created:
            (checkout / SETTINGS).unlink(missing_ok=True)
        else:
            installers.write(checkout / SETTINGS, _json_text(text, kept))
    if record.server is not None:
        if record.server.text is not None:
            note = installers.remove_toml_table(record.server, checkout, record)
            notes += [note] if note else []
        else:
            installers.remove_json_server(record.server, checkout, record)
    if record.block is not None and not keep_block:
        head = clients.RULES_HEAD if record.block.file == str(blocks.RULES) else ""
        blocks.remove(checkout / record.block.file, record.block.separator, record.block.created, head=head)
    (checkout / RECORDS[agent]).unlink(missing_ok=True)
    installers.clean(record, checkout)
    return notes


def _refreshed(checkout: Path, found: list[str] | None) -> list[blocks.Written]:
    """The checkout's existing blocks brought up to date (not when the conventions are unknown)."""
    return [] if found is None else blocks.refresh(checkout, found)


def _conventions(source: Source | None) -> tuple[list[str] | None, list[str]]:
    """The conventions for a block, or None and a note of why they could not be read."""
    if source is None:
        return None, []
    try:
        return read_conventions(source), []
    except Exception as exc:  # the install goes on: the session hook brings them in later
        return None, [f"the conventions were not read ({exc}); the block lists them once they are"]


def block(checkout: Path, files: list[str], source: Source) -> list[blocks.Written]:
    """`self agent block`: the managed block in each of `files` (AGENTS.md, and CLAUDE.md where
    it exists, by default), written or refreshed."""
    text = blocks.project_block(read_conventions(source))
    if files:
        return [w for f in files if (w := blocks.write(checkout / f, text)) is not None]
    done = [blocks.write(checkout / "AGENTS.md", text)]
    done += [
        blocks.write(checkout / f, text) for f in ("CLAUDE.md", str(blocks.RULES)) if (checkout / f).exists()
    ]
    return [w for w in done if w is not None]


def machine_block(home: Path) -> list[blocks.Written]:
    """`self agent block --machine`: the machine-level block for each agent this machine has."""
    return blocks.machine(home)


def _codex_home() -> Path:
    import os

    given = os.environ.get("CODEX_HOME")
    return Path(given).expanduser() if given else Path.home() / ".codex"


def _json_text(before: str, value: agent_hooks.Settings) -> str:
    from service.core.agent import jsontext

    return jsontext.rewrite(before, value) if before.strip() else json_dump(value)


def json_dump(value: object) -> str:
    import json

    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _check_agent(agent: str) -> None:
    if agent not in AGENTS:
        raise Invalid(f"no installer for agent {agent!r}; known: {', '.join(AGENTS)}", field="agent")


def _settings(text: str) -> agent_hooks.Settings:
    import json

    if not text:
        return {}
    try:
        found = json.loads(text)
    except ValueError as exc:
        why = f"{SETTINGS} is not JSON ({exc}); fix it first, nothing was changed"
        raise Invalid(why, field="settings") from None
    if not isinstance(found, dict):
        raise Invalid(f"{SETTINGS} is not a JSON object; fix it first, nothing was changed", field="settings")
    return found
