"""`self serve`: the team service over a data directory (service/server/api, imported when it runs)."""

from __future__ import annotations

import typer

from cli.team import DataOpt, IdentityOpt


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve(
        data: str = DataOpt,
        host: str = typer.Option("127.0.0.1", "--host", help="The address to listen on."),
        port: int = typer.Option(
            8765, "--port", min=1, max=65535, help="The TCP port to listen on (1-65535)."
        ),
        config: str | None = typer.Option(
            None,
            "--config",
            envvar="SELF_SERVE_CONFIG",
            help="A TOML file: workspaces, remotes, limits, logging (docs/team-service.md).",
        ),
        log_level: str | None = typer.Option(
            None,
            "--log-level",
            envvar="SELF_LOG_LEVEL",
            help="debug, info, warning or error (default: the file's [logging] level, else info).",
        ),
        trusted_proxies: str | None = typer.Option(
            None,
            "--trusted-proxies",
            envvar="SELF_TRUSTED_PROXIES",
            help="Addresses or networks (comma-separated CIDRs) whose X-Forwarded-For and -Proto"
            " count (default: the file's trusted_proxies, else none).",
        ),
        identity: str | None = IdentityOpt,
        replicated: bool = typer.Option(
            False,
            "--replicated",
            envvar="SELF_REPLICATED",
            help="Answer a write to a remote-backed workspace only once its remote holds it"
            " (default: the file's [replication] replicated, else off).",
        ),
    ) -> None:
        """Serve DATA's workspaces over HTTP until SIGTERM or Ctrl-C."""
        from pathlib import Path

        from cli.common import fail
        from service.app.team import serving
        from service.core.problems import problem
        from service.server.run import ConfigError
        from service.server.run import serve as run

        root = serving(data)  # a data directory made, and writable: else one line
        try:
            run(
                root,
                host,
                port,
                Path(config).expanduser() if config else None,
                log_level,
                trusted_proxies,
                identity,
                replicated,
            )
        except ConfigError as exc:  # refused before anything binds
            fail(str(exc), problem(exc.code).exit)
        except SystemExit as exc:
            if exc.code != problem("not-listening").exit:
                raise
            fail(_not_listening(host, port), exc.code)  # after the log's own line, if it has one


def _not_listening(host: str, port: int) -> str:
    """Why the service could not listen on `host:port` (uvicorn logs the error and exits 3),
    as a person reads it: asked again of the system, now."""
    import errno
    import socket

    where = f"{host}:{port}"
    try:
        with socket.create_server((host, port)):
            pass
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return f"cannot listen on {where}: the port is in use; stop what holds it, or pick another --port"
        if exc.errno == errno.EADDRNOTAVAIL or isinstance(exc, socket.gaierror):
            return f"cannot listen on {where}: no address of this machine; give another --host"
        if exc.errno == errno.EACCES:
            return f"cannot listen on {where}: permission denied; pick a --port from 1024 up"
        return f"cannot listen on {where}: {exc.strerror or exc}"
    return f"the service did not start on {where}; its log line above says why"
