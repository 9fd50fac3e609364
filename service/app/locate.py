"""Which workspace store and which project a call applies to: the one place that reads the
selection (given, else SELF_WORKSPACE / SELF_PROJECT, else the checkout's marker)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from service.core.errors import Invalid
from service.core.events.events import Actor, Origin

if TYPE_CHECKING:
    from service.adapters.store import Store
    from service.app.workspace import Workspace


def store_root(given: str | None, default: str | None = None) -> Path:
    """The store's folder: `given`, else SELF_WORKSPACE, else `default` (init: here), else the
    one the marker of the checkout here names (`self project link`)."""
    root = given or os.environ.get("SELF_WORKSPACE") or default or _linked()
    if not root:
        raise Invalid("no workspace store selected", code="no-workspace")
    return Path(root).expanduser()


def _linked() -> str | None:
    from service.adapters.store import local

    return local.marker_workspace(Path.cwd())


def project_slug(given: str | None, cwd: Path | None = None) -> str | None:
    """The project: `given`, else SELF_PROJECT, else the marker of the checkout `cwd` is in."""
    from service.adapters.store import local

    return given or os.environ.get("SELF_PROJECT") or local.find_marker(cwd or Path.cwd())


def valid_slug(slug: str) -> str:
    """`slug` when it can name a project (a selection given on the command line), else Invalid."""
    from service.core.commands.commands import valid_slug as checked

    return checked(slug)


def locate(workspace: str | None, project: str | None, cwd: Path | None = None) -> Workspace:
    """The workspace a call applies to, writing as the environment's actor."""
    from service.adapters.store import Store
    from service.app.workspace import Workspace

    store = Store.open(store_root(workspace))
    return Workspace(store, project_slug(project, cwd), lambda: origin_from_env(store))


def origin_from_env(store: Store | None = None) -> Origin:
    """Who is writing: SELF_ACTOR (agent or human, default human), SELF_SESSION, and the author:
    SELF_USER, else (writing to `store`) the person `login.author` finds, never the OS login name."""
    given = os.environ.get("SELF_ACTOR", "human")
    if given not in ("agent", "human"):
        raise Invalid(f"SELF_ACTOR={given!r} is neither agent nor human", field="actor")
    actor: Actor = "agent" if given == "agent" else "human"
    by = os.environ.get("SELF_USER") or None
    if by is None and store is not None:
        from service.app.login import author

        by = author(store)
    return Origin(actor, True, os.environ.get("SELF_SESSION") or None, by)
