"""The litestar app of a data directory: health, readiness, the `/api/v1` routes, one
problem-document answer for every error, and a request body cap."""

from __future__ import annotations

import threading
from pathlib import Path

from litestar import Litestar, Response, get
from litestar.datastructures import State

from service.api.errors import problem_response, respond
from service.api.routes import ROUTES
from service.api.search import SEARCH_ROUTES
from service.data.workspaces import Data
from service.index.shared import SharedIndex

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


def load(data: Data, ready: threading.Event, index: SharedIndex | None = None) -> None:
    """Fold every workspace's log once, so the first reads find warm caches; bring the search
    index up to every workspace; then ready."""
    from service.api.routes import open_workspace

    for name in data.names():
        ws = open_workspace(data, name, None, "service")
        ws.state("")  # the workspace log, with its list of projects
        for row in ws.projects():
            ws.state(str(row["slug"]))
    if index is not None:
        index.refresh_all()
    ready.set()


def build(root: Path) -> Litestar:
    data = Data(root)
    ready = threading.Event()
    index = SharedIndex(data)  # `refresh(workspace)` after a write makes it searchable at once

    def start() -> None:
        threading.Thread(target=load, args=(data, ready, index), name="load-workspaces", daemon=True).start()

    return Litestar(
        route_handlers=[healthz, readyz, *ROUTES, *SEARCH_ROUTES],
        state=State({"data": data, "ready": ready, "search": index}),
        on_startup=[start],
        on_shutdown=[index.close],
        exception_handlers={Exception: problem_response},
        request_max_body_size=BODY_CAP,
        debug=False,
    )
