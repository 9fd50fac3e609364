"""`self agent install AGENT` / `uninstall AGENT` on real files in a real git checkout (and a
HOME of its own for Codex): each writes what its agent reads, merged with what is there;
installing twice, with and without --service, leaves one of each; uninstall leaves every file
byte for byte as it was (`git status` clean, HOME's config as before)."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.support.selfrun import Store, describe

URL = "http://selfhub.example:8765/git/acme.git"
MCP = "http://selfhub.example:8765/mcp"
# the user's own files, laid out as people write them (4 spaces, a key order of their own)
SETTINGS = '{\n    "permissions": {"allow": ["Bash(ls:*)"]},\n    "hooks": {\n        "PreToolUse": [\n'
SETTINGS += '            {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo theirs"}]}\n'
SETTINGS += "        ]\n    }\n}\n"
THEIR_SERVERS = '{\n    "mcpServers": {\n        "docs": {"command": "docs-mcp"}\n    }\n}\n'
CODEX = 'model = "o4"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\nenv = { "DOCS_KEY" = "x" }\n'


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    folder = tmp_path / "app"
    (folder / ".claude").mkdir(parents=True)
    (folder / ".claude" / "settings.json").write_text(SETTINGS)
    (folder / ".cursor").mkdir()
    (folder / ".cursor" / "mcp.json").write_text(THEIR_SERVERS)
    (folder / "AGENTS.md").write_text("# App\n\nOur own words.\n")
    git(folder, "init", "-q")
    git(folder, "add", ".")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start")
    return folder


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".codex").mkdir(parents=True)
    (folder / ".codex" / "config.toml").write_text(CODEX)
    return folder


def agent(store: Store, home: Path, folder: Path, *args: str) -> str:
    done = store.run("agent", *args, "--dir", str(folder), env_extra={"HOME": str(home)})
    assert done.returncode == 0, describe(done)
    return done.stdout


def untouched(folder: Path) -> None:
    assert git(folder, "status", "--porcelain", "--untracked-files=all", "--ignored") == ""


def test_claude_twice_leaves_one_session_hook_and_uninstall_restores(
    store: Store, home: Path, checkout: Path
) -> None:
    agent(store, home, checkout, "install", "claude")
    agent(store, home, checkout, "install", "claude", "--service", URL)
    settings = json.loads((checkout / ".claude" / "settings.json").read_text())
    starts = [h["command"] for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
    assert starts == [f"self agent context --service {URL}"], starts
    tools = [h["command"] for g in settings["hooks"]["PreToolUse"] for h in g["hooks"]]
    assert tools == ["echo theirs", "self gate"]
    assert settings["permissions"] == {"allow": ["Bash(ls:*)"]}
    server = json.loads((checkout / ".mcp.json").read_text())["mcpServers"]["selfhub"]
    assert server == {"type": "http", "url": MCP, "headers": {"Authorization": "Bearer ${SELF_TOKEN}"}}
    agent(store, home, checkout, "install", "claude")
    server = json.loads((checkout / ".mcp.json").read_text())["mcpServers"]["selfhub"]
    assert server == {"command": "self", "args": ["mcp"]}
    assert "shb_" not in (checkout / ".mcp.json").read_text()
    agent(store, home, checkout, "uninstall", "claude")
    untouched(checkout)


def test_codex_writes_the_block_and_its_server_and_uninstall_restores(
    store: Store, home: Path, checkout: Path
) -> None:
    store.ok("convention", "add", "small commits")
    agent(store, home, checkout, "install", "codex")
    agents = (checkout / "AGENTS.md").read_text()
    assert agents.startswith("# App\n\nOur own words.\n") and "- small commits" in agents
    done = store.run(
        "agent", "install", "codex", "--service", URL, "--dir", str(checkout), env_extra={"HOME": str(home)}
    )
    assert done.returncode == 0 and "conventions were not read" in done.stderr, describe(done)
    assert (checkout / "AGENTS.md").read_text() == agents, "an unknown list of conventions empties no block"
    config = tomllib.loads((home / ".codex" / "config.toml").read_text())
    assert config["mcp_servers"]["selfhub"] == {"url": MCP, "bearer_token_env_var": "SELF_TOKEN"}
    assert config["mcp_servers"]["docs"]["env"] == {"DOCS_KEY": "x"} and config["model"] == "o4"
    agent(store, home, checkout, "install", "codex")
    text = (home / ".codex" / "config.toml").read_text()
    assert text.count("[mcp_servers.selfhub]") == 1
    assert tomllib.loads(text)["mcp_servers"]["selfhub"] == {"command": "self", "args": ["mcp"]}
    assert (checkout / "AGENTS.md").read_text().count("selfhub:begin") == 1
    agent(store, home, checkout, "uninstall", "codex")
    untouched(checkout)
    assert (home / ".codex" / "config.toml").read_text() == CODEX


def test_codex_on_a_machine_without_its_config_leaves_nothing_behind(
    store: Store, tmp_path: Path, checkout: Path
) -> None:
    home = tmp_path / "bare-home"
    home.mkdir()
    agent(store, home, checkout, "install", "codex")
    assert (home / ".codex" / "config.toml").read_text().startswith("[mcp_servers.selfhub]\n")
    agent(store, home, checkout, "uninstall", "codex")
    assert list(home.iterdir()) == []
    untouched(checkout)


def test_cursor_writes_its_server_and_rule_and_uninstall_restores(
    store: Store, home: Path, checkout: Path
) -> None:
    store.ok("convention", "add", "no print debugging")
    agent(store, home, checkout, "install", "cursor", "--service", URL)
    agent(store, home, checkout, "install", "cursor")
    servers = json.loads((checkout / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert servers == {"docs": {"command": "docs-mcp"}, "selfhub": {"command": "self", "args": ["mcp"]}}
    rule = (checkout / ".cursor" / "rules" / "selfhub.mdc").read_text()
    assert rule.startswith("---\n") and "alwaysApply: true" in rule and "- no print debugging" in rule
    assert rule.count("selfhub:begin") == 1
    agent(store, home, checkout, "install", "cursor", "--service", URL)
    server = json.loads((checkout / ".cursor" / "mcp.json").read_text())["mcpServers"]["selfhub"]
    assert server == {"url": MCP, "headers": {"Authorization": "Bearer ${env:SELF_TOKEN}"}}
    agent(store, home, checkout, "uninstall", "cursor")
    untouched(checkout)


def test_mcp_prints_a_clients_config_and_writes_nothing(store: Store, home: Path, checkout: Path) -> None:
    local = json.loads(agent(store, home, checkout, "install", "mcp"))
    assert local == {"mcpServers": {"selfhub": {"command": "self", "args": ["mcp"]}}}
    remote = json.loads(agent(store, home, checkout, "install", "mcp", "--service", URL))
    assert remote["mcpServers"]["selfhub"]["url"] == MCP
    assert "${SELF_TOKEN}" in remote["mcpServers"]["selfhub"]["headers"]["Authorization"]
    untouched(checkout)


def test_a_server_of_the_users_by_the_same_name_is_refused_and_left(
    store: Store, home: Path, checkout: Path
) -> None:
    theirs = '{"mcpServers": {"selfhub": {"command": "my-own"}}}\n'
    (checkout / ".mcp.json").write_text(theirs)
    done = store.run("agent", "install", "claude", "--dir", str(checkout), env_extra={"HOME": str(home)})
    assert done.returncode == 1 and "of its own" in done.stderr, describe(done)
    assert (checkout / ".mcp.json").read_text() == theirs
