"""The read answers, as bytes: each the document an `app/queries` function returns, encoded as
the CLI prints it (`--json`, or the agent's plain text), so a client and `self … --json` can
be compared byte for byte. The web view renders the same documents (`service/server/web`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import msgspec

from service.app import queries

if TYPE_CHECKING:
    from service.app.workspace import Workspace
    from service.core.projections.context import ContextDoc

Format = Literal["plain", "json"]


def as_json(data: object) -> bytes:
    """What `cli/common.py: emit_json` prints."""
    return msgspec.json.encode(data) + b"\n"


def as_text(text: str) -> bytes:
    """What `cli/common.py: echo` prints."""
    from service.core.gates.controls import escape

    return (escape(text.rstrip("\n")) + "\n").encode()


def context(ws: Workspace, form: Format, budget: int | None) -> bytes:
    """`self context --plain` / `--json` of the workspace's project."""
    from service.app import texts

    read = queries.context(ws, queries.budget(budget))
    return as_json(read.fitted()) if form == "json" else as_text(texts.context(read, agent=True))


def context_doc(ws: Workspace, budget: int | None = None) -> ContextDoc:
    """`self context --json [--budget N]` of the workspace's project: the document fitted to
    the budget (the store's own without one)."""
    from service.core.projections.context import ContextDoc

    doc = queries.context(ws, queries.budget(budget)).fitted()
    assert isinstance(doc, ContextDoc)  # a workspace with a project selected
    return doc


def status(ws: Workspace) -> bytes:
    """`self status --json` of the workspace's project."""
    return as_json(queries.status(ws))


def state_rows(ws: Workspace, all_: bool, at: str | None) -> bytes:
    """`self state list --json [--all] [--at …]` of the workspace's project."""
    return as_json(rows(ws, all_, at))


def rows(ws: Workspace, all_: bool, at: str | None = None) -> list[dict[str, Any]]:
    """The rows of `self state list --json [--all] [--at …]`."""
    return queries.records(ws, all_, None, at).rows


def record(ws: Workspace, prefix: str, history: bool, at: str | None) -> bytes:
    """`self state show ID --json [--history] [--at …]`."""
    return as_json(shown(ws, prefix, history, at))


def shown(ws: Workspace, prefix: str, history: bool, at: str | None = None) -> dict[str, Any]:
    """The document of `self state show ID --json [--history] [--at …]`."""
    return queries.record(ws, prefix, history, at).document()


def projects(ws: Workspace) -> bytes:
    """`self admin project list --json`."""
    return as_json(ws.projects())


def written(events: list[object]) -> bytes:
    """`--json` of a write (`cli/common.py: written`)."""
    from service.core.events.events import Event, as_dict

    return as_json({"events": [as_dict(e) for e in events if isinstance(e, Event)]})
