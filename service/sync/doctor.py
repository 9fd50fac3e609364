"""`self doctor`: what a plain-git merge (or a hand edit) did to a store's logs, and the repair.

Checks every log whole: conflict markers, repeated events (the same id twice; with other
bytes, a conflict), lines that are not events, segments not laid out 1,000 events each, and
working files that differ from main; and the remotes whose last sync stopped on an event
they hold in other bytes (`identity`). `repair` removes markers and second copies (the first
copy in file order stays, so no event is lost), lays the segments out again and commits
the result; lines that are not events stay where they are (reads quarantine them).
"""

from __future__ import annotations

import msgspec
from dulwich.objects import ObjectID

from service.store import Store, gitcommit, layout
from service.sync import identity, logs


class LogReport(msgspec.Struct):
    log: str
    events: int
    markers: int
    duplicates: int
    conflicting: int  # repeats whose bytes differ from the first copy
    unreadable: int
    laid_out: bool  # segments are 1,000 lines each but the last

    @property
    def damaged(self) -> bool:
        return bool(self.markers or self.duplicates or not self.laid_out)


class Report(msgspec.Struct):
    logs: list[LogReport]
    uncommitted: list[str]  # working files that differ from main
    repaired: bool = False
    head: str | None = None
    remotes: list[identity.Flag] = msgspec.field(default_factory=list)  # events they hold in other bytes


def _read(store: Store, log: str) -> tuple[list[str], list[bytes]]:
    folder = layout.log_dir(log)
    names = layout.segments(store.root, log)
    paths = [f"{folder}/{name}" for name in names]
    return paths, [line for p in paths for line in logs.lines_of((store.root / p).read_bytes())]


def examine(store: Store) -> Report:
    rows = []
    for log in store.logs():
        paths, lines = _read(store, log)
        first: dict[str, bytes] = {}
        markers = duplicates = conflicting = unreadable = 0
        for line in lines:
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
        rows.append(LogReport(log, len(first), markers, duplicates, conflicting, unreadable, laid))
    head = store.head()
    uncommitted = []
    if head is not None:
        tree = gitcommit.tree_files(store.repo, ObjectID(head.encode()))
        paths = [p for p in tree if layout.log_of_path(p) is not None or p == layout.CONFIG_FILE]
        paths += [f"{layout.log_dir(r.log)}/{n}" for r in rows for n in layout.segments(store.root, r.log)]
        on_disk = gitcommit.working_blob_ids(store.repo, sorted(set(paths)))
        uncommitted = sorted(p for p in set(paths) if on_disk.get(p) != tree.get(p))
    return Report(rows, uncommitted, head=head, remotes=identity.flags(store.local_dir))


def repair(store: Store) -> Report:
    """Repair every damaged log (and commit files left uncommitted) as one commit on main."""
    with store.locked():
        report = examine(store)
        if not any(r.damaged for r in report.logs) and not report.uncommitted:
            return report
        files: dict[str, bytes] = {}
        removed: list[str] = []
        for row in report.logs:
            paths, lines = _read(store, row.log)
            fixed = logs.repaired(lines).lines
            folder = layout.log_dir(row.log)
            laid = {f"{folder}/{n}": d for n, d in layout.split_segments(fixed).items()}
            for path, data in laid.items():
                files[path] = data
            removed += [p for p in paths if p not in laid]
        config = store.root / layout.CONFIG_FILE
        if config.exists():
            files[layout.CONFIG_FILE] = config.read_bytes()
        head = store.head()
        parent = None if head is None else ObjectID(head.encode())
        damaged = sum(r.markers + r.duplicates for r in report.logs)
        message = f"doctor: repair ({damaged} merge leftovers removed, segments laid out)"
        commit = gitcommit.build_commit(store.repo, files, message, parent, removed=removed)
        if commit != parent:
            store.checkout(commit.decode(), head, message)
        after = examine(store)
        after.repaired = True
        return after
