"""The tool table (`tools.py`) as a Model Context Protocol server of the official SDK, for
both transports: `self mcp` over stdio and the service's `/mcp`. Each transport gives the one
thing that differs, how a checked call is answered (on which workspace, as whom); a refusal
or a bad argument is the tool's error result, its words the error's.

The SDK takes a second or two to import: it is imported here only, when a server is made.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec

from service import __version__
from service.app import tools
from service.core.errors import Invalid, SelfhubError

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

    from service.app.workspace import Workspace


class Answered(msgspec.Struct, frozen=True):
    """A tool's answer: its text, and whether it is the tool's error."""

    text: str
    error: bool = False


# a checked call, and the request's context (its HTTP request on the service) → the answer
Answer = Callable[[tools.Call, Any], Awaitable[Answered]]
INSTRUCTIONS = (
    "selfhub: the team's shared goals, decisions, claims and work. Call context for a project "
    "first; record what you decide or learn; move work units as you go."
)


def server(answer: Answer) -> Server[Any]:
    """The SDK's server of the tool table, each call answered by `answer`."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    listed = [
        types.Tool(name=t["name"], description=t["description"], input_schema=t["inputSchema"])
        for t in tools.listing()
    ]

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            done = await answer(tools.parse(params.name, params.arguments), ctx)
        except SelfhubError as exc:
            done = Answered(failure(exc), error=True)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=done.text)], is_error=done.error
        )

    return Server(
        "selfhub",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def failure(exc: SelfhubError) -> str:
    """An error as a tool's error text: its code and its words."""
    code = getattr(exc, "code", "error")
    return f"{code}: {exc}"


def serve_stdio(answer: Answer) -> None:
    """The tools over this process's stdin and stdout until the client closes them."""
    import anyio

    anyio.run(_stdio, server(answer))


async def _stdio(made: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await made.run(read, write, made.create_initialization_options())


def local(locate: Callable[[str | None], Workspace]) -> Answer:
    """Calls answered on the local store: `locate(project)` is the workspace a call reads or
    writes (`self`'s own selection when the call names no project)."""
    import anyio.to_thread

    async def answer(call: tools.Call, ctx: Any) -> Answered:
        def run() -> str:
            return tools.answer(locate(call.project), call)

        return Answered(await anyio.to_thread.run_sync(run))

    return answer


def endpoint(service: str) -> str:
    """The `/mcp` URL of a service given as its base URL, its `/mcp` URL or a workspace's
    URL on it (`http://HOST:PORT/git/WS.git`); Invalid for anything else (`clients.mcp_url`,
    the one reading of a service's URL an agent's config is written from)."""
    from service.core.agent.clients import mcp_url

    given = service.strip().rstrip("/")
    return mcp_url(given.removesuffix("/mcp"))


def token_for(service: str) -> str:
    """The token a call to `service` carries: SELF_TOKEN, else the credentials the CLI uses for
    that URL (`self remote`); Invalid when there is none."""
    from service.adapters.sync import credentials

    found = credentials.lookup(service)
    if found is None:
        raise Invalid(
            "no token for the service: set SELF_TOKEN, or add the URL to the credentials file",
            code="missing-value",
            field="token",
        )
    return found.token


RELAY_TIMEOUT_S = 60.0


COMMIT = "selfhub-commit"  # a write's answer: the commit that holds it
MIN_COMMIT = "Selfhub-Min-Commit"  # a request: answer from states that include it


def relay(url: str, token: str) -> Answer:
    """Calls answered by the service's `/mcp` at `url`, with `token`: the same table there.
    Each call after a write names that write's commit (`Selfhub-Min-Commit`), so whichever
    instance of the service answers, it reads what this relay wrote."""
    wrote: list[str] = []  # the commit of the last call that wrote

    async def noted(response: Any) -> None:
        commit = response.headers.get(COMMIT)
        if commit:
            wrote[:] = [commit]

    async def answer(call: tools.Call, ctx: Any) -> Answered:
        import httpx2
        from mcp import Client
        from mcp.shared._httpx_utils import create_mcp_http_client

        arguments = msgspec.to_builtins(call.args)
        headers = {"Authorization": f"Bearer {token}"} | ({MIN_COMMIT: wrote[0]} if wrote else {})
        try:
            async with (
                create_mcp_http_client(headers=headers) as http,
                Client(_transport(url, http), read_timeout_seconds=RELAY_TIMEOUT_S) as client,
            ):
                http.event_hooks["response"].append(noted)
                got = await client.call_tool(call.tool.name, arguments)
        except (httpx2.HTTPError, OSError) as exc:
            why = f"the service at {url} did not answer ({type(exc).__name__}: {exc})"
            return Answered(f"unreachable: {why}; check the service's URL and the token", error=True)
        text = "".join(getattr(part, "text", "") for part in got.content)
        return Answered(text, error=bool(got.is_error))

    return answer


def _transport(url: str, http: Any) -> Any:
    from mcp.client.streamable_http import streamable_http_client

    return streamable_http_client(url, http_client=http)
