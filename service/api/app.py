"""The litestar app of a data directory: health, readiness, the `/api/v1` routes, one
problem-document answer for every error, and a request body cap."""

from __future__ import annotations

import threading
from pathlib import Path

from litestar import Litestar, Response, get
from litestar.datastructures import State

from service.api.errors import problem_response, respond
from service.api.routes import ROUTES
from service.api.stream import ROUTES as STREAMS
from service.api.writes import ROUTES as WRITES
from service.data.workspaces import Data
from service.live.hub import Hub

BODY_CAP = 1024 * 1024  # bytes of a request body; a command is a few kilobytes


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


def load(hub: Hub, ready: threading.Event) -> None:
    """Fold every workspace's logs into memory; then ready."""
    hub.open_all()
    ready.set()


def build(root: Path) -> Litestar:
    data = Data(root)
    hub = Hub(data)
    ready = threading.Event()

    def start() -> None:
        threading.Thread(target=load, args=(hub, ready), name="load-workspaces", daemon=True).start()

    return Litestar(
        route_handlers=[healthz, readyz, *ROUTES, *WRITES, *STREAMS],
        state=State({"data": data, "hub": hub, "ready": ready}),
        on_startup=[start],
        on_shutdown=[hub.close],
        exception_handlers={Exception: problem_response},
        request_max_body_size=BODY_CAP,
        debug=False,
    )


def from_environment() -> Litestar:
    """The app of the data directory `SELF_DATA` names: for an ASGI server started by import
    string (`granian --factory service.api.app:from_environment`)."""
    import os

    return build(Path(os.environ["SELF_DATA"]))
