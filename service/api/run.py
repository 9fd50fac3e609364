"""Run the app under uvicorn: one process, loopback by default; SIGTERM and Ctrl-C stop
it after the requests in flight (uvicorn's graceful shutdown) and exit 0.

uvicorn for now; granian against uvicorn on this workload is to be measured
(bench/service.py) before the choice is final."""

from __future__ import annotations

import signal
from pathlib import Path

STOP = (signal.SIGINT, signal.SIGTERM)


def serve(data: Path, host: str, port: int) -> None:
    import uvicorn

    from service.api.app import build

    config = uvicorn.Config(build(data), host=host, port=port, log_level="warning", access_log=False)
    # uvicorn sends the signal that stopped it again once it has shut down, to the handler
    # that was in place before: a no-op here, so a stop asked for is a clean exit (0).
    for sig in STOP:
        signal.signal(sig, lambda *_: None)
    uvicorn.Server(config).run()
