"""The application layer: what a front end (the CLI today, the HTTP service next) calls.

`locate` finds the workspace store and the project once; `execute` runs a command value
(`service.model.requests`) in a store transaction on the log the model's rule names. Each
front end parses its input into a command, makes one call here and renders the events or
the error (`service.model.problems` maps each error code to an exit code and an HTTP status).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.app.locate import locate, store_root, valid_slug

if TYPE_CHECKING:
    from service.model.events import Event
    from service.model.posted import Posted, PostEvents
    from service.model.requests import AnyCommand
    from service.workspace import Workspace as Workspace  # the type `locate` returns

__all__ = ["execute", "locate", "post", "problem", "store_root", "valid_slug"]


def execute(workspace: Workspace, command: AnyCommand) -> list[Event]:
    """The events `command` appended (`service/app/writes.py`), or the refusal it raised."""
    from service.app import writes  # imported by a write only: `self context` stays light

    return writes.execute(workspace, command)


def post(workspace: Workspace, body: PostEvents) -> Posted:
    """The events of one post written as given, all or none (`service/app/posting.py`)."""
    from service.app import posting

    return posting.post(workspace, body)


def problem(exc: BaseException) -> dict[str, object] | None:
    """The RFC 9457 problem document an HTTP front end answers for `exc` (`service/app/errors.py`)."""
    from service.app import errors

    return errors.problem(exc)
