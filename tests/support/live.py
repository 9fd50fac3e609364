"""A live workspace as the service holds it, for the tests of the service's writer and reads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from service.adapters.data.workspaces import Data
from service.server.live.hub import Hub
from service.server.live.space import LiveWorkspace


@contextmanager
def live_workspace(folder: Path, name: str = "acme") -> Iterator[LiveWorkspace]:
    """Workspace `name` of a new DATA in `folder`, held by a hub that is closed afterwards."""
    data = Data(folder / "data")
    data.add(name).close()
    hub = Hub(data)
    try:
        yield hub.workspace(name)
    finally:
        hub.close()
