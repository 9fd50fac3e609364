"""The application layer: what every front end calls — the CLI (`cli/`) and the HTTP service
(`service/server/api/`, `service/server/web/`).

`locate` finds the workspace store and the project once; `execute` runs a command value
(`service.core.commands.requests`) in a store transaction on the log the model's rule names, and
`post` writes events posted as they are (`POST …/events`). Each front end parses its input
into a command, makes one call here and renders the events or the error
(`service.core.problems` maps each error code to an exit code and an HTTP status; `problem`
makes the RFC 9457 document an HTTP front end answers).

The modules: `writes` (a command run on fresh state under the store lock), `posting` (posted
events), `queries` (one function per read, each returning the document `--json` prints) and
`texts` (their text renders), `gate` (`self gate`), `settings` (a new store, projects, the
alias table, the token estimate, the Superself import), `exchange` (Docket files in and out,
the Parquet export), `remotes` (the remote table, sync, doctor, clone), `team` (a service's
data directory for `self admin`), `agents` (`self agent`), `errors` (problem documents).
The application layer and the wiring (`service/app/workspace.py`) reach a store only through the
store port (`ports.py`), which the store on disk satisfies and so do the service's live
workspaces (`service/server/live/view.py`) and the in-memory store (`memory.py`, on which
`tests/unit/test_app_on_memory_store.py` runs this layer and
`tests/integration/test_memory_store_parity.py` holds it to the store on disk).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.app.locate import locate, store_root, valid_slug

if TYPE_CHECKING:
    from service.app.workspace import Workspace as Workspace  # the type `locate` returns
    from service.core.commands.requests import AnyCommand
    from service.core.events.events import Event
    from service.core.events.posted import Posted, PostEvents

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
