"""`self serve`: the team service over a data directory (service/server/api, imported when it runs)."""

from __future__ import annotations

import typer

from cli.team import DataOpt


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve(
        data: str = DataOpt,
        host: str = typer.Option("127.0.0.1", "--host", help="The address to listen on."),
        port: int = typer.Option(8765, "--port", help="The TCP port to listen on."),
        config: str | None = typer.Option(
            None,
            "--config",
            envvar="SELF_SERVE_CONFIG",
            help="A TOML file: workspaces, remotes, limits, logging (docs/team-service.md).",
        ),
    ) -> None:
        """Serve DATA's workspaces over HTTP until SIGTERM or Ctrl-C."""
        from pathlib import Path

        from cli.common import fail
        from service.core.problems import problem
        from service.server.run import ConfigError
        from service.server.run import serve as run

        try:
            run(Path(data).expanduser(), host, port, Path(config).expanduser() if config else None)
        except ConfigError as exc:  # refused before anything binds
            fail(str(exc), problem(exc.code).exit)
