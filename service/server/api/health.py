"""Health and readiness: `/healthz` answers while the process serves, `/readyz` once every
workspace is loaded (503 while loading, or when one could not be)."""

from __future__ import annotations

from litestar import Response, get
from litestar.datastructures import State

from service.server.api import openapi
from service.server.api.bodies import Health
from service.server.api.errors import respond


@get("/healthz", sync_to_thread=False, responses=openapi.answers(Health))
def healthz() -> Health:
    return Health("ok")


@get("/readyz", sync_to_thread=False, responses=openapi.answers(Health, 503))
def readyz(state: State) -> Response[bytes] | dict[str, str]:
    if state["failed"].is_set():  # what failed is in the log, not told to whoever asks
        title = "A workspace could not be loaded; the service's log says which and why"
        return respond(503, {"type": "about:blank", "title": title, "status": 503, "code": "load-failed"})
    if not state["ready"].is_set():
        return respond(
            503, {"type": "about:blank", "title": "Loading workspaces", "status": 503, "code": "loading"}
        )
    return {"status": "ready"}
