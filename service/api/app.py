"""The litestar app of a data directory: health, readiness, the `/api/v1` routes, one
problem-document answer for every error, and a request body cap."""

from __future__ import annotations

import threading
from pathlib import Path

from litestar import Litestar, Response, get
from litestar.datastructures import State

from service.api import openapi
from service.api.bodies import Health
from service.api.errors import problem_response, respond
from service.api.routes import ROUTES
from service.data.workspaces import Data

BODY_CAP = 1024 * 1024  # bytes of a request body; a command is a few kilobytes


@get("/healthz", sync_to_thread=False, responses=openapi.answers(Health))
def healthz() -> Health:
    return Health("ok")


@get("/readyz", sync_to_thread=False, responses=openapi.answers(Health, 503))
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


def build(root: Path) -> Litestar:
    data = Data(root)
    ready = threading.Event()

    def start() -> None:
        threading.Thread(target=load, args=(data, ready), name="load-workspaces", daemon=True).start()

    return Litestar(
        route_handlers=[healthz, readyz, *ROUTES],
        state=State({"data": data, "ready": ready}),
        on_startup=[start],
        exception_handlers={Exception: problem_response},
        request_max_body_size=BODY_CAP,
        openapi_config=openapi.config(),
        debug=False,
    )
