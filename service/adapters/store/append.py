"""The append gate: the only writer of logs.

Every event is checked by the model's rules (`service/core/gates/event_gate.py`: known type,
payload that decodes, the log's project, an id after the log's last one, the sanitize gate)
and encoded canonically before a byte is written. A torn tail of the log (a write a crash
cut short) is first moved to `.local/quarantine/` (`aside.py`), so a commit only ever holds
whole, valid lines. Then the lines go to the segment files (1,000 lines per segment, only
the last one grows), are fsynced, and the changed segments are committed as one commit. A
failure at any step leaves the log files as they were (a torn tail stays set aside).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from dulwich.repo import Repo

from service.adapters.store import aside, durable, gitcommit, layout
from service.adapters.store.layout import SEGMENT_EVENTS, display, segment_index, segment_name
from service.adapters.store.segments import open_append, read_log
from service.core.events import order
from service.core.events.events import Event
from service.core.gates.event_gate import admitted, in_order


def append(
    root: Path,
    repo: Repo,
    log: str,
    events: list[Event],
    last_id: str | None,
    local: Sequence[str] = (),
) -> str | None:
    """Append new events (ids in increasing order, after `last_id`); returns the commit id.

    `local`: machine-local strings (home, store and checkout paths) no event may contain.
    """
    if not events:
        return None
    lines = [admitted(log, event, writable=True, local=local) for event in in_order(events, last_id)]
    return _write(root, repo, log, lines, f"append: {_count(len(lines))} to {display(log)}")


def import_events(
    root: Path, repo: Repo, log: str, events: list[Event], local: Sequence[str] = ()
) -> list[Event]:
    """Append events keeping their own ids: in id order, one copy of each (the winner,
    `order`), ids already in the log skipped.

    Legacy and unknown types are kept (an import keeps every event); the sanitize gate
    still runs. Returns the events written.
    """
    present = {event.id for event in read_log(root, log).events}
    batch = [e for e in order.distinct(events, _id_of, order.event_rank).kept if e.id not in present]
    if batch:
        lines = [admitted(log, event, writable=False, local=local) for event in batch]
        _write(root, repo, log, lines, f"import: {_count(len(lines))} to {display(log)}")
    return batch


def _id_of(event: Event) -> str:
    return event.id


def _count(n: int) -> str:
    return "1 event" if n == 1 else f"{n} events"


def check(log: str, event: Event, local: Sequence[str] = ()) -> bytes:
    """The canonical line of a new event bound for `log`, or the refusal (Invalid, Refused):
    every check of `append` but the id order, for a caller that gathers lines first."""
    return admitted(log, event, writable=True, local=local)


def _write(root: Path, repo: Repo, log: str, lines: list[bytes], message: str) -> str:
    return write_lines(root, repo, {log: lines}, message)[0]


def write_lines(
    root: Path, repo: Repo, lines: dict[str, list[bytes]], message: str, *, index: bool = True
) -> tuple[str, list[str]]:
    """Append checked lines (`check`) to several logs as one commit: every segment and git
    object durable before main moves (one filesystem flush where the system has one, else an
    fsync each); on any failure every touched segment is put back as it was. Returns the
    commit and the files it changed; `.git/index` follows them unless `index` is False (a
    caller that brings it up to date later: it is a convenience for git users, never read
    without checking the file it describes)."""
    written: list[tuple[Path, int | None]] = []
    files: dict[str, bytes] = {}
    deferred = durable.available()
    store = repo.object_store
    try:
        for log, log_lines in lines.items():
            files |= _append_log(root, log, log_lines, written, fsync=not deferred)
        parent = gitcommit.head(repo)
        per_object, store.fsync_object_files = store.fsync_object_files, not deferred
        try:
            commit = gitcommit.build_commit(repo, files, message, parent)
        finally:
            store.fsync_object_files = per_object
        if deferred:
            durable.flush(root)
        if commit != parent:
            gitcommit.move_branch(repo, parent, commit, message)
    except BaseException:
        _undo(written)
        raise
    if index:
        gitcommit.update_index(repo, list(files))
    return commit.decode("ascii"), sorted(files)


def _append_log(
    root: Path, log: str, lines: list[bytes], written: list[tuple[Path, int | None]], *, fsync: bool
) -> dict[str, bytes]:
    """Write `lines` to `log`'s segments (each fsynced, unless the caller flushes them all);
    the files to commit, path → content."""
    folder = root / layout.log_dir(log)
    tail = aside.whole_tail(root, log)  # only whole, valid lines are ever committed
    plan = _plan(tail.names, tail.data, lines)
    folder.mkdir(parents=True, exist_ok=True)
    for name, (old, new) in plan.items():
        written.append((folder / name, len(old) if old is not None else None))
        _append_bytes(folder / name, new, fsync=fsync)
    if fsync and any(old is None for old, _ in plan.values()):
        _fsync_dir(folder)  # a new segment's name
    rel = layout.log_dir(log)
    return {f"{rel}/{name}": (old or b"") + new for name, (old, new) in plan.items()}


def _plan(names: list[str], old: bytes | None, lines: list[bytes]) -> dict[str, tuple[bytes | None, bytes]]:
    """Segment name → (its current bytes or None if new, the bytes to add), given the log's
    segment names and its last segment's bytes."""
    index = segment_index(names[-1]) if names else 0
    count = (old or b"").count(b"\n")  # every line whole: a torn tail was set aside
    if count >= SEGMENT_EVENTS:
        index, old, count = index + 1, None, 0
    plan: dict[str, tuple[bytes | None, bytes]] = {}
    while lines:
        take, lines = lines[: SEGMENT_EVENTS - count], lines[SEGMENT_EVENTS - count :]
        plan[segment_name(index)] = (old, b"".join(take))
        index, old, count = index + 1, None, 0
    return plan


def _append_bytes(path: Path, data: bytes, *, fsync: bool = True) -> None:
    with os.fdopen(open_append(path), "ab") as handle:
        handle.write(data)
        handle.flush()
        if fsync:
            os.fsync(handle.fileno())


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _undo(written: list[tuple[Path, int | None]]) -> None:
    """Put every touched segment back to its size before the append (new ones removed)."""
    for path, size in written:
        try:
            if size is None:
                path.unlink(missing_ok=True)
            else:
                os.truncate(path, size)
        except OSError:
            pass
