"""Who pushed what into a hosted store: the author of record of a pushed event.

An event names its author in `origin.by`, but a push carries lines its pusher wrote by hand:
the claim is the pusher's word. The service does not rewrite a pushed commit (its ids and bytes
are the pusher's, and a relay is legitimate: Ben may push the events Ann wrote offline), so it
keeps its own record beside the store, machine-local and never synced: `.local/pushes.jsonl`,
one line per push, appended before main moves to the pushed commit:

    {"at": ms, "by": USER, "commit": SHA, "events": [ID, ...], "relayed": [ID, ...]}

`by` is the pushing token's user, `events` every event the push appended, `relayed` those
whose `origin.by` is missing or names someone else. Replayed in order, the lines give the map
`relayed` (event id → pusher) of the events whose claimed author is not the pusher: a later
push of the same event by its author takes it out again (the first push may have failed after
its line was written). Readers show `pushed_by` beside `origin.by` for those events, so no
claimed author appears without the user who pushed it. The map is kept per store in memory and
read on from where it was left (one stat per read), so attribution costs a dict lookup an event.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from service.adapters.store import clock

FILE = "pushes.jsonl"


class Brought(NamedTuple):
    """One event a push brought: its id and the author it claims (None: none)."""

    id: str
    claims: str | None


class _Kept:
    def __init__(self) -> None:
        self.relayed: dict[str, str] = {}
        self.offset = 0
        self.stamp: tuple[int, int] | None = None  # the file's (inode, size) when last read


_kept: dict[Path, _Kept] = {}
_lock = threading.Lock()


def record(local_dir: Path, commit: str, by: str, events: Iterable[Brought]) -> None:
    """Append the line of one push: `by` pushed `commit`, which brought `events`."""
    brought = list(events)
    line = {
        "at": clock.wall_ms(),
        "by": by,
        "commit": commit,
        "events": [e.id for e in brought],
        "relayed": [e.id for e in brought if e.claims != by],
    }
    data = json.dumps(line, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    local_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(local_dir / FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def relayed(local_dir: Path) -> Mapping[str, str]:
    """Event id → the user who pushed it, for the pushed events whose `origin.by` is missing
    or names someone else. Read only; empty for a store nothing was pushed into."""
    path = local_dir / FILE
    try:
        seen = os.stat(path)
    except FileNotFoundError:
        return {}
    with _lock:
        kept = _kept.setdefault(local_dir, _Kept())
        stamp = (seen.st_ino, seen.st_size)
        if kept.stamp != stamp:
            if kept.stamp is None or kept.stamp[0] != seen.st_ino or seen.st_size < kept.offset:
                kept.relayed, kept.offset = {}, 0  # another file: read from its start
            _read_on(path, kept)
            kept.stamp = stamp
        return kept.relayed


def _read_on(path: Path, kept: _Kept) -> None:
    with path.open("rb") as file:
        file.seek(kept.offset)
        data = file.read()
    whole = data[: data.rfind(b"\n") + 1]  # a line cut short is read once it is whole
    kept.offset += len(whole)
    fresh = dict(kept.relayed)  # readers hold the map they were given: it is never changed under them
    for raw in whole.splitlines():
        try:
            line = json.loads(raw)
            by, events, others = str(line["by"]), line["events"], set(line["relayed"])
        except (ValueError, KeyError, TypeError):
            continue  # a damaged line attributes nothing
        for event_id in events:
            if event_id in others:
                fresh[str(event_id)] = by
            else:
                fresh.pop(str(event_id), None)
    kept.relayed = fresh
