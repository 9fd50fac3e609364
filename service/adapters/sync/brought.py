"""The events one commit of a store holds and another does not: what a fetch (or a push into
the store) brought, for the service's live state and stream. Only the log segments whose blob
differs between the two are read: a segment both hold at one path holds the same lines."""

from __future__ import annotations

from dulwich.objects import ObjectID
from dulwich.repo import Repo

from service.adapters.store import gitcommit, layout, treediff
from service.adapters.sync import logs
from service.core.errors import Invalid
from service.core.events.events import Event, decode_line


def brought(repo: Repo, old: str | None, new: str) -> dict[str, list[Event]]:
    """Per log, the events of `new` that `old` lacks (None: every one), in id order; a line
    that is no event is left out (the fold sets it aside too)."""
    changes = {
        path: change
        for path, change in treediff.changed_files(repo, _sha(old), _sha(new)).items()
        if layout.log_of_path(path) is not None
    }
    after = {path: new_id for path, (_, new_id) in changes.items() if new_id is not None}
    changed = sorted(after)
    replaced = [old_id for old_id, _ in changes.values() if old_id is not None]
    held = {i for old_id in replaced for i in logs.id_set(_lines(repo, old_id))}
    found: dict[str, dict[str, Event]] = {}
    for path in changed:
        log = layout.log_of_path(path)
        assert log is not None
        for line in _lines(repo, after[path]):
            event_id = logs.line_id(line)
            if event_id is None or event_id in held or event_id in found.get(log, {}):
                continue
            try:
                found.setdefault(log, {})[event_id] = decode_line(line)
            except Invalid:
                continue
    return {log: [events[i] for i in sorted(events)] for log, events in sorted(found.items())}


def settings_changed(repo: Repo, old: str | None, new: str) -> bool:
    """Whether `workspace.json` differs between the two commits."""
    before = None if old is None else treediff.file_id(repo, _sha(old), layout.CONFIG_FILE)
    return before != treediff.file_id(repo, _sha(new), layout.CONFIG_FILE)


def _sha(commit: str | None) -> ObjectID | None:
    return None if commit is None else ObjectID(commit.encode("ascii"))


def _lines(repo: Repo, blob: ObjectID) -> list[bytes]:
    return logs.lines_of(gitcommit.blob_data(repo, blob))
