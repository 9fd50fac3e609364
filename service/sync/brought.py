"""The events one commit of a store holds and another does not: what a fetch (or a push into
the store) brought, for the service's live stream. Only the log segments whose blob differs
between the two are read: a segment both hold at one path holds the same lines."""

from __future__ import annotations

from dulwich.objects import ObjectID
from dulwich.repo import Repo

from service.model.errors import Invalid
from service.model.events import Event, decode_line
from service.store import gitcommit, layout
from service.sync import logs


def brought(repo: Repo, old: str | None, new: str) -> list[Event]:
    """The events of `new`'s logs that `old`'s lack (None: every one), in id order; a line
    that is no event is left out (the fold sets it aside too)."""
    after = _log_files(repo, new)
    before = _log_files(repo, old) if old is not None else {}
    changed = [p for p, blob in after.items() if before.get(p) != blob]
    gone = [p for p, blob in before.items() if after.get(p) != blob]
    held = {i for p in gone for i in logs.id_set(_lines(repo, before[p]))}
    found: dict[str, Event] = {}
    for path in changed:
        for line in _lines(repo, after[path]):
            event_id = logs.line_id(line)
            if event_id is None or event_id in held or event_id in found:
                continue
            try:
                found[event_id] = decode_line(line)
            except Invalid:
                continue
    return [found[i] for i in sorted(found)]


def _log_files(repo: Repo, commit: str) -> dict[str, ObjectID]:
    files = gitcommit.tree_files(repo, ObjectID(commit.encode("ascii")))
    return {p: blob for p, blob in files.items() if layout.log_of_path(p) is not None}


def _lines(repo: Repo, blob: ObjectID) -> list[bytes]:
    return logs.lines_of(gitcommit.blob_data(repo, blob))
