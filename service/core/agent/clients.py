"""What each coding agent reads to reach selfhub's MCP server: the entry for its config.

Pure: a service URL (or none) in, the entry out. Without a service the agent starts
`self mcp` over stdio on the local store; with one it speaks streamable HTTP to the service's
`/mcp`, the bearer token read from SELF_TOKEN when the agent connects: no file written here
holds a token.
"""

from __future__ import annotations

import json
import re

from service.core.agent.hooks import SERVICE_URL
from service.core.errors import Invalid

NAME = "selfhub"  # the server's name in every agent's config
TOKEN_ENV = "SELF_TOKEN"
STDIO: dict[str, object] = {"command": "self", "args": ["mcp"]}
_BASE = re.compile(r"(?P<scheme>https?)://(?P<host>[^/\s@]+)/?")
RULES_HEAD = (
    "---\ndescription: selfhub, the project's shared state, and how to record in it\nalwaysApply: true\n---\n"
)


def mcp_url(service: str) -> str:
    """`SERVICE/mcp` of a workspace's URL on a service (http://HOST:PORT/git/WS.git) or of the
    service's own (http://HOST:PORT): the token names the workspace."""
    found = SERVICE_URL.fullmatch(service) or _BASE.fullmatch(service)
    if found is None or "@" in found["host"]:
        raise Invalid(
            f"{service!r} is not a service's URL: give http://HOST:PORT or a workspace's "
            "http://HOST:PORT/git/WS.git, without credentials (the token is read from SELF_TOKEN)",
            field="service",
        )
    return f"{found['scheme']}://{found['host']}/mcp"


def claude(service: str | None) -> dict[str, object]:
    """Claude Code's `.mcp.json` entry; it expands `${VAR}` in url and headers
    (https://code.claude.com/docs/en/mcp)."""
    if service is None:
        return dict(STDIO)
    return {"type": "http", "url": mcp_url(service), "headers": {"Authorization": f"Bearer ${{{TOKEN_ENV}}}"}}


def cursor(service: str | None) -> dict[str, object]:
    """Cursor's `.cursor/mcp.json` entry; it expands `${env:NAME}` (https://cursor.com/docs/context/mcp)."""
    if service is None:
        return dict(STDIO)
    return {"url": mcp_url(service), "headers": {"Authorization": f"Bearer ${{env:{TOKEN_ENV}}}"}}


def codex(service: str | None) -> str:
    """Codex's `[mcp_servers.NAME]` table for ~/.codex/config.toml; for a URL it reads the
    token from the variable `bearer_token_env_var` names (https://developers.openai.com/codex/mcp)."""
    if service is None:
        body = ['command = "self"', 'args = ["mcp"]']
    else:
        body = [f"url = {json.dumps(mcp_url(service))}", f"bearer_token_env_var = {json.dumps(TOKEN_ENV)}"]
    return "\n".join([f"[mcp_servers.{NAME}]", *body]) + "\n"


def generic(service: str | None) -> dict[str, object]:
    """The `mcpServers` document most MCP clients take, for `self agent install mcp` to print."""
    return {"mcpServers": {NAME: claude(service)}}


def rules(block: str) -> str:
    """Cursor's rule file (`.cursor/rules/selfhub.mdc`, always applied) holding the managed
    block (https://cursor.com/docs/context/rules)."""
    return RULES_HEAD + block + "\n"
