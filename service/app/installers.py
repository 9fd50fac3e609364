"""The files an agent install changes, each change noted so that uninstall takes out exactly it.

An MCP server entry goes into a JSON config (`mcpServers.NAME`, the rest of the text kept as
it was: `service/core/agent/jsontext.py`) or is appended to Codex's TOML as its own table;
files and folders an install makes are noted and go again when they are empty. Paths are
noted relative to the checkout, or to the home folder as `~/…`: no machine path in a record.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
from pathlib import Path

import msgspec

from service.core.agent import jsontext
from service.core.agent.hooks import Added
from service.core.errors import Invalid

SERVERS = "mcpServers"


class ServerAdded(msgspec.Struct, frozen=True):
    """An MCP server entry an install added: a JSON config's (`entry`, and whether it made the
    `mcpServers` object) or a TOML table's exact text and what preceded it."""

    file: str
    name: str
    entry: dict[str, object] | None = None
    made_servers: bool = False
    text: str | None = None
    separator: str = ""


class BlockAdded(msgspec.Struct, frozen=True):
    file: str
    separator: str
    created: bool


class Record(msgspec.Struct):
    """What the install in a checkout added (hooks for Claude Code, the server, the block)
    and the files and folders it made."""

    installs: list[Added] = msgspec.field(default_factory=list)
    server: ServerAdded | None = None
    block: BlockAdded | None = None
    created: list[str] = msgspec.field(default_factory=list)


def read_record(path: Path) -> Record:
    try:
        return msgspec.json.decode(path.read_bytes(), type=Record)
    except FileNotFoundError:
        return Record()
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise Invalid(
            f"{path.name} is unreadable; remove it and what it names by hand", field="settings"
        ) from None


def write_record(path: Path, record: Record, checkout: Path) -> None:
    make_parents(path, checkout, record)
    if not path.exists():
        record.created.append(named(path, checkout))
    write(path, msgspec.json.format(msgspec.json.encode(record)).decode() + "\n")


def named(path: Path, checkout: Path) -> str:
    """How a record names `path`: relative to the checkout, else `~/…`, else as it is."""
    for base, prefix in ((checkout.resolve(), ""), (Path.home().resolve(), "~/")):
        try:
            return prefix + str(path.resolve().relative_to(base))
        except ValueError:
            continue
    return str(path)


def where(name: str, checkout: Path) -> Path:
    if name.startswith("~/"):
        return Path.home() / name[2:]
    return checkout / name


def make_parents(path: Path, checkout: Path, record: Record) -> None:
    """Make `path`'s missing folders, noting each one made."""
    missing = [p for p in reversed(path.parents) if not p.exists()]
    for folder in missing:
        folder.mkdir()
        record.created.append(named(folder, checkout))


def still_made(record: Record, checkout: Path) -> list[str]:
    """What an earlier install made that its take-out left (a folder holding the block kept
    across installs): the next install's record names it, so its uninstall removes it."""
    return [name for name in record.created if where(name, checkout).exists()]


def clean(record: Record, checkout: Path) -> None:
    """Remove the record's folders that are empty again (the deepest first)."""
    for name in reversed(record.created):
        path = where(name, checkout)
        if path.is_dir():
            with contextlib.suppress(OSError):  # something else is in it now: it stays
                path.rmdir()


def add_json_server(path: Path, name: str, entry: dict[str, object], checkout: Path, record: Record) -> bool:
    """`mcpServers.NAME` set to `entry` in the JSON config at `path`; False when it was there already."""
    text = read_text(path)
    doc = _json(text, path)
    servers = doc.get(SERVERS, {})
    if not isinstance(servers, dict):
        raise Invalid(f"{SERVERS} in {path.name} is not an object; fix it first, nothing was changed")
    if name in servers:
        if servers[name] == entry:
            return False
        raise Invalid(
            f"{path.name} has an MCP server {name!r} of its own: remove or rename it, then install again",
            field="settings",
        )
    new = copy.deepcopy(doc)
    new.setdefault(SERVERS, {})[name] = entry  # type: ignore[index]
    _made(path, checkout, record)
    write(path, jsontext.rewrite(text, new))
    record.server = ServerAdded(named(path, checkout), name, entry, made_servers=SERVERS not in doc)
    return True


def remove_json_server(added: ServerAdded, checkout: Path, record: Record) -> None:
    path = where(added.file, checkout)
    text = read_text(path)
    if not text:
        return
    doc = _json(text, path)
    servers = doc.get(SERVERS)
    if not isinstance(servers, dict) or added.name not in servers:
        return
    new = copy.deepcopy(doc)
    del new[SERVERS][added.name]  # type: ignore[attr-defined]
    if added.made_servers and not new[SERVERS]:
        del new[SERVERS]
    if not new and added.file in record.created:
        path.unlink()
    else:
        write(path, jsontext.rewrite(text, new))


def add_toml_table(path: Path, name: str, table: str, checkout: Path, record: Record) -> bool:
    """Codex's `[mcp_servers.NAME]` appended to the TOML at `path`; False when it was there already."""
    import tomllib

    text = read_text(path)
    try:
        there = tomllib.loads(text).get("mcp_servers", {}).get(name)
    except tomllib.TOMLDecodeError as exc:
        raise Invalid(f"{path.name} is not TOML ({exc}); fix it first, nothing was changed") from None
    if there is not None:
        if there == tomllib.loads(table)["mcp_servers"][name]:
            return False
        raise Invalid(
            f"{path.name} has an [mcp_servers.{name}] of its own: remove it, then install again",
            field="settings",
        )
    separator = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
    _made(path, checkout, record)
    write(path, text + separator + table)
    record.server = ServerAdded(named(path, checkout), name, text=table, separator=separator)
    return True


def remove_toml_table(added: ServerAdded, checkout: Path, record: Record) -> str | None:
    """Take the table out again; a note when it was changed by hand and so left."""
    path = where(added.file, checkout)
    text, table = read_text(path), added.text or ""
    chunk = added.separator + table
    at = text.rfind(chunk)
    if at == -1:
        chunk, at = table, text.rfind(table)
    if at == -1:
        return f"[mcp_servers.{added.name}] in {added.file} was changed by hand: take it out yourself"
    text = text[:at] + text[at + len(chunk) :]
    if not text and added.file in record.created:
        path.unlink()
    else:
        write(path, text)
    return None


def _made(path: Path, checkout: Path, record: Record) -> None:
    if not path.exists():
        make_parents(path, checkout, record)
        record.created.append(named(path, checkout))


def read_text(path: Path) -> str:
    try:
        return path.read_text("utf-8")
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError:
        raise Invalid(f"{path.name} is not UTF-8 text; fix it first, nothing was changed") from None


def _json(text: str, path: Path) -> dict[str, object]:
    if not text.strip():
        return {}
    try:
        found = json.loads(text)
    except ValueError as exc:
        raise Invalid(
            f"{path.name} is not JSON ({exc}); fix it first, nothing was changed", field="settings"
        ) from None
    if not isinstance(found, dict):
        raise Invalid(
            f"{path.name} is not a JSON object; fix it first, nothing was changed", field="settings"
        )
    return found


def write(path: Path, data: str) -> None:
    import tempfile  # here, as tomllib: `self agent context` imports this module, never writes

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as out:
        out.write(data.encode("utf-8"))
    os.replace(name, path)
