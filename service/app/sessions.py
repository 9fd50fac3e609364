"""What a coding agent's session starts with (`self agent context`, the session-start hook):
the project's context, from the service when the hook names one (the workspace's URL there,
the token from SELF_TOKEN or the credentials file), else from the local store; it never fails
the hook, it says what it could not read instead. It also brings the checkout's managed
blocks up to date (`blocks.py`). Apart from the installers (`agents.py`), which a session
start never needs, so that the hook imports only what it uses."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from service.app import blocks
from service.core.errors import Invalid

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from service.app.workspace import Workspace


class Source(msgspec.Struct, frozen=True):
    """Where the conventions of a block are read: the service's workspace, else the local store."""

    service: str | None
    project: str | None
    local: Callable[[], Workspace] | None


def session_context(service: str | None, project: str | None, local: Callable[[], Workspace]) -> str:
    """The context a session starts with: the service's when `service` is given and answers,
    else the local store's; a note of what could not be read, never an error."""
    refresh_blocks(Path.cwd(), Source(service, project, local))
    notes: list[str] = []
    if service is not None:
        try:
            return _from_service(service, project)
        except (OSError, Invalid, ValueError) as exc:
            notes.append(f"(the service at {service} gave no context: {exc}; the local store's follows)")
    try:
        from service.app import queries, texts

        return "\n".join([*notes, texts.context(queries.context(local(), None), agent=True)])
    except Exception as exc:  # a hook must not fail the session: say what is missing
        notes.append(f"(no selfhub context: {exc})")
        return "\n".join(notes)


def refresh_blocks(checkout: Path, source: Source) -> None:
    """The checkout's managed blocks brought up to date at session start, where there are any;
    a line on stderr when that could not be done or rewrote a newer block, never an error."""
    try:
        if not blocks.has_block(checkout):
            return
        notes = newer_notes(blocks.refresh(checkout, read_conventions(source)))
    except Exception as exc:  # a hook must not fail the session
        notes = [f"the managed block was not refreshed: {exc}"]
    for note in notes:
        print(f"self: {note}", file=sys.stderr)


def read_conventions(source: Source) -> list[str]:
    if source.service is not None:
        return blocks.service_conventions(source.service, source.project)
    if source.local is None:
        raise Invalid("no workspace store selected (SELF_WORKSPACE)", code="no-workspace")
    return blocks.conventions(source.local())


def newer_notes(written: Sequence[blocks.Written | None]) -> list[str]:
    """A note for each block that a newer selfhub had written (now holding this version's text)."""
    from service import __version__

    return [
        f"{w.file}: its block was written by selfhub v{w.newer}, newer than this one (v{__version__}); "
        "it now holds this version's text: update self on this machine"
        for w in written
        if w is not None and w.newer
    ]


def _from_service(service: str, project: str | None) -> str:
    from service.app import servicereads

    return servicereads.get(service, project, "context", {"format": "plain"}).text
