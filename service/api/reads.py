"""The read answers, as bytes: the same JSON (and the same plain text) the CLI prints for
the same store, so a client and `self … --json` can be compared byte for byte. The documents
behind them (`context_doc`, `rows`, `shown`) are what the web view renders (`service/web`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import msgspec

if TYPE_CHECKING:
    from service.model.context import ContextDoc
    from service.workspace import Workspace

Format = Literal["plain", "json"]


def as_json(data: object) -> bytes:
    """What `cli/common.py: emit_json` prints."""
    return msgspec.json.encode(data) + b"\n"


def as_text(text: str) -> bytes:
    """What `cli/common.py: echo` prints."""
    from service.model.controls import escape

    return (escape(text.rstrip("\n")) + "\n").encode()


def context(ws: Workspace, form: Format, budget: int | None) -> bytes:
    """`self context --plain` / `--json` of the workspace's project."""
    from service.model import context

    if budget is not None:
        context.check_budget(budget)
    config = ws.config()
    given = budget if budget is not None else config.context_budget
    if form == "json":
        return as_json(context_doc(ws, given))
    return as_text(context.render_agent(ws.context(), given, config.tokens_per_char))


def context_doc(ws: Workspace, budget: int | None = None) -> ContextDoc:
    """`self context --json [--budget N]`: the document fitted to the budget (the store's own
    without one)."""
    from service.model import context

    config = ws.config()
    given = budget if budget is not None else config.context_budget
    return context.fit(ws.context(), given, config.tokens_per_char)


def status(ws: Workspace) -> bytes:
    """`self status --json` of the workspace's project."""
    return as_json(ws.status())


def state_rows(ws: Workspace, all_: bool, at: str | None) -> bytes:
    """`self state list --json [--all] [--at …]` of the workspace's project."""
    return as_json(rows(ws, all_, at))


def rows(ws: Workspace, all_: bool, at: str | None = None) -> list[dict[str, Any]]:
    """The rows of `self state list --json [--all] [--at …]`."""
    from service.model import views

    log = ws.require_project()
    state = ws.state_at(log, at) if at is not None else ws.state(log)
    shorts = views.short_ids(state.entities)
    extras = views.ledger_extras(state)
    return [views.entity_row(e, shorts[e.id], extras.get(e.id)) for e in views.list_rows(state, all_)]


def record(ws: Workspace, prefix: str, history: bool, at: str | None) -> bytes:
    """`self state show ID --json [--history] [--at …]`."""
    return as_json(shown(ws, prefix, history, at))


def shown(ws: Workspace, prefix: str, history: bool, at: str | None = None) -> dict[str, Any]:
    """The document of `self state show ID --json [--history] [--at …]`."""
    from service.model import views
    from service.model.events import as_dict

    entity, events, extra = ws.show(prefix, history, at)
    row = views.entity_row(entity, entity.id, extra)
    return {**row, "history": [as_dict(e) for e in events]} if history else row


def projects(ws: Workspace) -> bytes:
    """`self admin project list --json`."""
    return as_json(ws.projects())


def written(events: list[object]) -> bytes:
    """`--json` of a write (`cli/render.py: written`)."""
    from service.model.events import Event, as_dict

    return as_json({"events": [as_dict(e) for e in events if isinstance(e, Event)]})
