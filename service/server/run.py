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
or any ASGI server."""

from __future__ import annotations

import signal
from pathlib import Path
from types import FrameType

import uvicorn

from service.server.api.config import ConfigError

__all__ = ["ConfigError", "serve"]

STOP = (signal.SIGINT, signal.SIGTERM)


class Server(uvicorn.Server):
    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        state = getattr(self.config.app, "state", None)
        if state is not None and "hub" in state:
            state["hub"].end_streams()  # a stream never ends by itself
        super().handle_exit(sig, frame)


def serve(data: Path, host: str, port: int, config: Path | None = None) -> None:
    """Serve `data` on `host:port` under the configuration file `config` (defaults without
    one); a ConfigError, before anything binds, when that file is refused."""
    from service.server import connections
    from service.server.api import logs
    from service.server.api.config import load
    from service.server.bootstrap import build

    settings = load(config)
    limits = settings.limits
    server = uvicorn.Config(
        build(data, settings),
        host=host,
        port=port,
        log_level="warning",
        log_config=logs.uvicorn_config(settings.logging),
        access_log=False,  # the app writes one line per request itself (service/server/api/logs.py)
        timeout_keep_alive=limits.keep_alive_s,
        timeout_graceful_shutdown=limits.shutdown_s or None,
        http=connections.protocol(limits),  # a time for the headers, caps on connections
    )
    # uvicorn sends the signal that stopped it again once it has shut down, to the handler
    # that was in place before: a no-op here, so a stop asked for is a clean exit (0).
    for sig in STOP:
        signal.signal(sig, lambda *_: None)
    Server(server).run()
