"""Run the app under uvicorn: one process, loopback by default; SIGTERM and Ctrl-C stop
it after the requests in flight (uvicorn's graceful shutdown) and exit 0.

uvicorn for now; granian against uvicorn on this workload is to be measured
(bench/service.py) before the choice is final."""

from __future__ import annotations

import signal
from pathlib import Path

from service.api.config import ConfigError

__all__ = ["ConfigError", "serve"]

STOP = (signal.SIGINT, signal.SIGTERM)


def serve(data: Path, host: str, port: int, config: Path | None = None) -> None:
    """Serve `data` on `host:port` under the configuration file `config` (defaults without
    one); a ConfigError, before anything binds, when that file is refused."""
    import uvicorn

    from service.api import logs
    from service.api.app import build
    from service.api.config import load

    settings = load(config)
    limits = settings.limits
    server = uvicorn.Config(
        build(data, settings),
        host=host,
        port=port,
        log_level="warning",
        log_config=logs.uvicorn_config(settings.logging),
        access_log=False,  # the app writes one line per request itself (service/api/logs.py)
        timeout_keep_alive=limits.keep_alive_s,
        timeout_graceful_shutdown=limits.shutdown_s or None,
    )
    # uvicorn sends the signal that stopped it again once it has shut down, to the handler
    # that was in place before: a no-op here, so a stop asked for is a clean exit (0).
    for sig in STOP:
        signal.signal(sig, lambda *_: None)
    uvicorn.Server(server).run()
