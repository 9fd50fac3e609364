"""The litestar app of a data directory: health, readiness, the `/api/v1` routes, one
problem-document answer for every error, a request body cap, and its operations (its
configuration, `/metrics`, a log line per request, the rate limit, the time limit)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TextIO

from litestar import Litestar, Response, get
from litestar.datastructures import State

from service.api import logs
from service.api.config import ServiceConfig
from service.api.errors import problem_response, respond
from service.api.limits import Limiter
from service.api.metrics import Metrics, metrics
from service.api.observe import Observe
from service.api.routes import ROUTES
from service.data.workspaces import Data


@get("/healthz", sync_to_thread=False)
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/readyz", sync_to_thread=False)
def readyz(state: State) -> Response[bytes] | dict[str, str]:
    if not state["ready"].is_set():
        return respond(
            503, {"type": "about:blank", "title": "Loading workspaces", "status": 503, "code": "loading"}
        )
    return {"status": "ready"}


def load(data: Data, ready: threading.Event) -> None:
    """Fold every workspace's log once, so the first reads find warm caches; then ready."""
    from service.api.routes import open_workspace

    for name in data.names():
        ws = open_workspace(data, name, None, "service")
        ws.state("")  # the workspace log, with its list of projects
        for row in ws.projects():
            ws.state(str(row["slug"]))
    ready.set()


def build(root: Path, config: ServiceConfig | None = None, log_to: TextIO | None = None) -> Litestar:
    """The app of data directory `root`; its log lines go to `log_to` (stderr)."""
    config = config or ServiceConfig()
    data = Data(root)
    ready = threading.Event()
    for name in config.workspaces:  # the configuration's, made before anything is served
        if not data.has(name):
            data.add(name)

    def start() -> None:
        threading.Thread(target=load, args=(data, ready), name="load-workspaces", daemon=True).start()

    limits, counted = config.limits, Metrics()
    limiter = Limiter(limits.rate, limits.burst)
    app = Litestar(
        route_handlers=[healthz, readyz, metrics, *ROUTES],
        state=State({"data": data, "ready": ready, "config": config, "metrics": counted, "limiter": limiter}),
        on_startup=[start],
        exception_handlers={Exception: problem_response},
        request_max_body_size=limits.body_bytes,
        debug=False,
    )
    # around the router, so that every request is seen, an unknown path's too
    log = logs.logger(config.logging, log_to)
    app.asgi_handler = Observe(app.asgi_handler, counted, log, limits.request_s)
    return app
