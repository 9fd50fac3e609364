"""`self mcp`: the agents' tools (service/app/tools.py) over the Model Context Protocol on
stdin and stdout, on the local store, or relayed to a service's `/mcp` with `--service`."""

from __future__ import annotations

import typer

from cli.common import OPTIONS


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp(
        service: str | None = typer.Option(
            None,
            "--service",
            help="Serve the tools of this service (http://HOST:PORT) instead of the local store; "
            "token: SELF_TOKEN, else the credentials file (`self login` keeps it there).",
        ),
    ) -> None:
        """Serve the tools (context, search, show, record, work, review, gate) to an MCP client
        over stdio: the client runs `self mcp`."""
        from service.app import locate, mcpserver

        if service is not None:
            url = mcpserver.endpoint(service)
            answer = mcpserver.relay(url, mcpserver.token_for(url))
        else:
            answer = mcpserver.local(lambda project: locate(OPTIONS.workspace, project or OPTIONS.project))
        mcpserver.serve_stdio(answer)
