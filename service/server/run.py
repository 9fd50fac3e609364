"""Run the app under uvicorn: one process, loopback by default; SIGTERM and Ctrl-C end the
live streams at once, let the requests in flight (writes included) finish, then stop the
writers and exit 0.

uvicorn (with uvloop and httptools), chosen over granian on this workload: in three runs of
`bench/service.py` (100,000 events, 2 cores) their rates were within the machine's
noise of each other (/healthz 8.6-9.6k against 8.5-10.1k requests/s, context 4.0-4.8k
against 3.7-4.7k, posts 0.76-1.01k against 0.84-0.89k events/s), while granian held 1.6x
the memory (360-382 against 221-238 MiB); and uvicorn runs in this process, so SIGTERM
reaches the hub (streams end, writers drain) and its log records pass through the
service's own masking. `service.server.bootstrap:from_environment` still serves the app to granian
or any ASGI server.

The process says what it serves: a `starting` line (version, data directory, workspaces, the
data format's version, the log level), `listening` once bound (its URL, the trusted proxies,
where /metrics is), `stopping` on a signal and `stopped` at the end. `X-Forwarded-For` and
`-Proto` count from the configuration's `trusted_proxies` alone (uvicorn's proxy headers
middleware, given exactly those): the client address the rate limit charges and the scheme
the web view's cookie is Secure by."""

from __future__ import annotations

import asyncio
import signal
import socket
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import uvicorn

from service.server.api.config import ConfigError

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from service.adapters.data.workspaces import Data
    from service.server.api.config import ServiceConfig

__all__ = ["ConfigError", "serve"]

STOP = (signal.SIGINT, signal.SIGTERM)


class Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, settings: ServiceConfig, log: Any) -> None:
        super().__init__(config)
        self.settings, self.log = settings, log
        self.loop: asyncio.AbstractEventLoop | None = None  # the one serving, once started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        await super().startup(sockets)
        if self.started:
            bound = [s.getsockname() for server in self.servers for s in server.sockets]
            self.log.info(
                "listening",
                urls=[_url(address) for address in bound],
                trusted_proxies=list(self.settings.trusted_proxies),
                metrics=_metrics_at(self.settings, self.config.host),
            )

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """A stop asked for by a signal. This runs as a signal handler, between two bytecodes
        of whatever the main thread was doing, perhaps inside a lock (the hub's, the log's):
        it takes none, and leaves the line and the end of the streams to the event loop."""
        if not self.should_exit:
            if self.loop is not None:
                self.loop.call_soon_threadsafe(self._stopping, sig)
            else:
                self._stopping(sig)
        super().handle_exit(sig, frame)

    def _stopping(self, sig: int) -> None:
        state = getattr(self.config.app, "state", None)
        if state is not None and "hub" in state:
            state["hub"].end_streams()  # a stream never ends by itself
        self.log.info("stopping", signal=signal.Signals(sig).name, grace_s=self.settings.limits.shutdown_s)


def serve(
    data: Path,
    host: str,
    port: int,
    config: Path | None = None,
    level: str | None = None,
    proxies: str | None = None,
    identity: str | None = None,
    replicated: bool = False,
) -> None:
    """Serve `data` on `host:port` under the configuration file `config` (defaults without
    one), at log level `level` and behind the comma-separated `proxies` when given (else the
    file's); a ConfigError, before anything binds, when that file or those are refused."""
    from service.server import connections
    from service.server.api import logs
    from service.server.api.config import load, metrics_token, with_options
    from service.server.bootstrap import build

    settings = with_options(load(config), level, proxies, identity)
    if replicated:  # `--replicated`: as the file's [replication] replicated = true
        import msgspec

        replication = msgspec.structs.replace(settings.replication, replicated=True)
        settings = msgspec.structs.replace(settings, replication=replication)
    metrics_token(settings)  # a variable named and not set: refused now
    limits = settings.limits
    app = build(data, settings)
    _started(app.state, settings)
    server = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        log_config=logs.uvicorn_config(settings.logging),
        access_log=False,  # the app writes one line per request itself (service/server/api/logs.py)
        timeout_keep_alive=limits.keep_alive_s,
        timeout_graceful_shutdown=limits.shutdown_s or None,
        http=connections.protocol(limits),  # a time for the headers, caps on connections
        proxy_headers=bool(settings.trusted_proxies),
        forwarded_allow_ips=list(settings.trusted_proxies),
    )
    scrapes = _metrics_port(app.state, settings, host)
    # uvicorn sends the signal that stopped it again once it has shut down, to the handler
    # that was in place before: a no-op here, so a stop asked for is a clean exit (0).
    for sig in STOP:
        signal.signal(sig, lambda *_: None)
    runner = Server(server, settings, app.state["log"])
    try:
        runner.run()
    finally:
        if scrapes is not None:
            scrapes.shutdown()
        if runner.started:
            app.state["log"].info("stopped")


def _started(state: Any, settings: ServiceConfig) -> None:
    from service import __version__

    data = state["data"]
    state["log"].info(
        "starting",
        version=__version__,
        data=str(data.root),
        workspaces=data.names(),
        remotes=sorted(settings.remotes),
        format=data_format(data),
        log_level=settings.logging.level,
    )


def data_format(data: Data) -> int:
    """The data directory's format version (`self serve` checked it is this release's)."""
    from service.adapters.data import formats

    return formats.read(data.root)


def _metrics_port(state: Any, settings: ServiceConfig, host: str) -> WSGIServer | None:
    """/metrics on a port of its own (`[metrics] port`), in a thread of prometheus-client's."""
    if not settings.metrics.port:
        return None
    from prometheus_client import start_http_server

    try:
        server, _ = start_http_server(settings.metrics.port, addr=host, registry=state["metrics"].registry)
    except OSError as exc:
        raise ConfigError(
            f"[metrics] port: cannot listen on {host}:{settings.metrics.port} "
            f"({exc.strerror or exc}); pick another port"
        ) from None
    return server


def _metrics_at(settings: ServiceConfig, host: str) -> str:
    if settings.metrics.port:
        return _url((host, settings.metrics.port)) + "/metrics"
    return "/metrics, token" if settings.metrics.token_env else "/metrics"


def _url(address: Any) -> str:
    host, port = address[0], address[1]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
