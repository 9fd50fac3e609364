"""Read-your-writes over several instances: every write's answer names the commit that holds
it (`Selfhub-Commit`); a request naming one (`Selfhub-Min-Commit`) is answered from states
that include it — fetched from the workspace's backend when this instance lacks it, waited
for up to `[replication] wait_s`, else a 503 `not-yet` with `Retry-After`
(`server/mirror/fresh.py`). A value that is not a commit id is a 422.

`check` is the `before_request` hook of every `/api/v1` route that names an action
(`openapi.protected`): the token guard first, then the wait, so a caller without a token
never makes the instance fetch."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from service.server.api import guard
from service.server.api.errors import ApiError

if TYPE_CHECKING:
    from litestar.connection import ASGIConnection

    from service.server.api.config import ServiceConfig

    Connection = ASGIConnection[Any, Any, Any, Any]

COMMIT = "Selfhub-Commit"  # on every write's answer
MIN_COMMIT = "Selfhub-Min-Commit"  # on a request: answer from states that include it
RETRY_AFTER_S = 1
_SHA = re.compile(r"[0-9a-fA-F]{40}")


class NotYet(ApiError):
    code = "not-yet"

    def __init__(self, commit: str, seconds: float) -> None:
        super().__init__(
            f"this instance does not hold commit {commit} (Selfhub-Min-Commit) after {seconds:g} s, "
            f"fetching from the workspace's backend; retry in {RETRY_AFTER_S} s"
        )

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(RETRY_AFTER_S)}


class NotACommit(ApiError):
    code = "invalid-value"

    def __init__(self, given: str) -> None:
        shown = given if len(given) <= 64 else given[:64] + "…"
        super().__init__(
            f"Selfhub-Min-Commit {shown!r} is not a commit id: send the 40 hex digits of a write's "
            "Selfhub-Commit, or no header"
        )


def wanted(value: str | None) -> str | None:
    """The commit a `Selfhub-Min-Commit` value names (None: none named); NotACommit otherwise."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if not _SHA.fullmatch(value):
        raise NotACommit(value)
    return value.lower()


async def check(connection: Connection) -> None:
    """The token guard (`guard.check`), then the wait for `Selfhub-Min-Commit`."""
    await guard.check(connection)
    workspace = connection.path_params.get("ws")
    commit = wanted(connection.headers.get(MIN_COMMIT))
    if workspace is not None and commit is not None:
        await at_least(connection, str(workspace), commit)


async def at_least(connection: Connection, workspace: str, commit: str) -> None:
    """Return once workspace `workspace`'s states include `commit`; NotYet past the wait."""
    from service.server.mirror.fresh import until_held

    app = connection.app
    config: ServiceConfig = app.state["config"]
    seconds = config.replication.wait_s
    if not await until_held(app.state["hub"], app.state["mirrors"], workspace, commit, seconds):
        raise NotYet(commit, seconds)
