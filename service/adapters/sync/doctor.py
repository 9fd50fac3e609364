"""`self doctor`: what a crash or a plain-git merge (or a hand edit) did to a store, and the
repair.

Checks every log whole: torn lines (the bytes a crash left after a log's last newline or a
last line that does not decode, and any line that starts like an event but is not JSON — a
torn write an older version committed), conflict markers, repeated events (the same id
twice; with other bytes, a conflict), lines that are not events, segments not laid out
1,000 events each, working files that differ from main, and git lock files in `.git` (a
crash's, or those of a git command under way). `repair` removes the lock files at least
`gitcommit.STALE_LOCK` seconds old, moves torn lines to `.local/quarantine/`, removes
markers and the other copies of a repeated id (the winner stays, `core/events/order.py`: the copy
every fold keeps, so a repair changes no state), lays
the segments out again and commits the result; other lines that are not events stay where
they are (reads quarantine them). It also lists the remotes whose last sync stopped on an
event they hold in other bytes (`identity`), and what a write needs that this user may not
write (a store read-only for it: reads work, writes are refused).
"""

from __future__ import annotations

from pathlib import Path

import msgspec
from dulwich.objects import ObjectID

from service.adapters.store import Store, aside, gitcommit, layout, segments
from service.adapters.sync import identity, logs

_json = msgspec.json.Decoder()


class LogReport(msgspec.Struct):
    log: str
    events: int
    markers: int
    duplicates: int
    conflicting: int  # repeats whose bytes differ from the first copy (in file order)
    unreadable: int
    laid_out: bool  # segments are 1,000 lines each but the last
    torn: int = 0  # lines a crash cut short (set aside by a repair)

    @property
    def damaged(self) -> bool:
        return bool(self.markers or self.duplicates or self.torn or not self.laid_out)


class Report(msgspec.Struct):
    logs: list[LogReport]
    uncommitted: list[str]  # working files that differ from main
    repaired: bool = False
    head: str | None = None
    remotes: list[identity.Flag] = msgspec.field(default_factory=list)  # events they hold in other bytes
    set_aside: list[str] = msgspec.field(default_factory=list)  # where a repair moved torn lines
    locks: list[str] = msgspec.field(default_factory=list)  # git lock files in .git
    read_only: list[str] = msgspec.field(default_factory=list)  # what a write needs, not writable here


class _Read(msgspec.Struct):
    paths: list[str]
    lines: list[bytes]  # every line, each ending in a newline, but the torn ones
    torn: list[bytes]


def _read(store: Store, log: str) -> _Read:
    folder = layout.log_dir(log)
    paths = [f"{folder}/{name}" for name in layout.segments(store.root, log)]
    read = _Read(paths, [], [])
    for n, path in enumerate(paths):
        data = (store.root / path).read_bytes()
        tail = b""
        if n == len(paths) - 1:
            cut = aside.torn_at(data)  # the rule the append gate sets a torn tail aside by
            data, tail = data[:cut], data[cut:]
        unread = {q.line for q in segments.decode(data, path)[1]}
        for number, line in enumerate(logs.lines_of(data), 1):
            (read.torn if number in unread and _torn(line) else read.lines).append(line)
        if tail:
            read.torn.append(tail if tail.endswith(b"\n") else tail + b"\n")
    return read


def _torn(line: bytes) -> bool:
    """A line that starts as every event line does and is not JSON: a write cut short."""
    if not line.startswith(b'{"id":"'):
        return False
    try:
        _json.decode(line)
    except msgspec.DecodeError:
        return True
    return False


def examine(store: Store) -> Report:
    rows = []
    for log in store.logs():
        read = _read(store, log)
        paths = read.paths
        first: dict[str, bytes] = {}
        markers = duplicates = conflicting = unreadable = 0
        for line in read.lines:
            if logs.is_marker(line):
                markers += 1
                continue
            found = logs.line_id(line)
            if found is None:
                unreadable += 1
            elif found in first:
                duplicates += 1
                conflicting += first[found] != line
            else:
                first[found] = line
        laid = [layout.segment_name(n) for n in range(len(paths))] == [p.rsplit("/", 1)[1] for p in paths]
        for p in paths[:-1]:
            data = (store.root / p).read_bytes()
            laid = laid and data.count(b"\n") == layout.SEGMENT_EVENTS and data.endswith(b"\n")
        rows.append(
            LogReport(log, len(first), markers, duplicates, conflicting, unreadable, laid, len(read.torn))
        )
    head = store.head()
    uncommitted = []
    if head is not None:
        tree = gitcommit.tree_files(store.repo, ObjectID(head.encode()))
        paths = [p for p in tree if layout.log_of_path(p) is not None or p == layout.CONFIG_FILE]
        paths += [f"{layout.log_dir(r.log)}/{n}" for r in rows for n in layout.segments(store.root, r.log)]
        on_disk = gitcommit.working_blob_ids(store.repo, sorted(set(paths)))
        uncommitted = sorted(p for p in set(paths) if on_disk.get(p) != tree.get(p))
    git_dir = Path(store.repo.controldir())
    locks = [f".git/{p.relative_to(git_dir).as_posix()}" for p in gitcommit.lock_files(git_dir)]
    read_only = [str(p) for p in store.unwritable(store.logs())]
    flags = identity.flags(store.local_dir)
    return Report(rows, uncommitted, head=head, remotes=flags, locks=locks, read_only=read_only)


def repair(store: Store) -> Report:
    """Remove stale git lock files, then repair every damaged log (and commit files left
    uncommitted) as one commit on main."""
    with store.locked():
        gitcommit.clear_stale_locks(Path(store.repo.controldir()))
        report = examine(store)
        if not any(r.damaged for r in report.logs) and not report.uncommitted:
            return report
        files: dict[str, bytes] = {}
        removed: list[str] = []
        kept: list[str] = []
        for row in report.logs:
            read = _read(store, row.log)
            if read.torn:
                kept.append(str(aside.keep(store.local_dir, row.log, read.torn)))
            fixed = logs.repaired(read.lines).lines
            folder = layout.log_dir(row.log)
            laid = {f"{folder}/{n}": d for n, d in layout.split_segments(fixed).items()}
            for path, data in laid.items():
                files[path] = data
            removed += [p for p in read.paths if p not in laid]
        config = store.root / layout.CONFIG_FILE
        if config.exists():
            files[layout.CONFIG_FILE] = config.read_bytes()
        head = store.head()
        parent = None if head is None else ObjectID(head.encode())
        damaged = sum(r.markers + r.duplicates for r in report.logs)
        torn = sum(r.torn for r in report.logs)
        done = [f"{damaged} merge leftovers removed"] + ([f"{torn} torn lines set aside"] if torn else [])
        message = f"doctor: repair ({', '.join(done)}, segments laid out)"
        commit = gitcommit.build_commit(store.repo, files, message, parent, removed=removed)
        store.checkout(commit.decode(), head, message)  # the same commit: the files follow it
        after = examine(store)
        after.repaired = True
        after.set_aside = kept
        return after
