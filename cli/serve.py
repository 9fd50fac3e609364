"""`self serve`: the team service over a data directory (service/api, imported when it runs)."""

from __future__ import annotations

import typer

from cli.team import DataOpt


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve(
        data: str = DataOpt,
        host: str = typer.Option("127.0.0.1", "--host", help="The address to listen on."),
        port: int = typer.Option(8765, "--port", help="The TCP port to listen on."),
    ) -> None:
        """Serve DATA's workspaces over HTTP until SIGTERM or Ctrl-C."""
        from pathlib import Path

        from service.api.run import serve as run

        run(Path(data).expanduser(), host, port)
