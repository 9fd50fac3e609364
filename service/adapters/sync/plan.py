"""What the remote lacks: the plan of the commit a sync pushes on top of the remote's head (its
logs with the local-only events appended in id order, laid out in segments, workspace.json when
a local edit travels), what it brings back, and the events a rewritten remote lost.

Segments whose blob is the same on both sides hold the same events, so only the segments from
the first one that differs are read: a sync costs O(segment), not O(log).
"""

from __future__ import annotations

import msgspec
from dulwich.objects import Blob, ObjectID
from dulwich.repo import Repo

from service.adapters.store import Store, aside, gitcommit, layout
from service.adapters.store.segments import read_segment
from service.adapters.sync import identity, intake, logs
from service.adapters.sync.errors import SyncError
from service.adapters.sync.prefix import Prefix, shared_segments


class Plan(msgspec.Struct):
    files: dict[str, bytes]
    removed: list[str]
    pushed: int
    pushed_ids: set[str]
    pulled: int
    quarantined: int
    unreadable: dict[str, list[bytes]]
    top_id: str | None
    config: str
    repaired: int = 0
    newest: str | None = None  # the greatest remote id the local logs lack
    differ: list[str] = msgspec.field(default_factory=list)  # ids held in other bytes on each side

    @property
    def changes(self) -> bool:
        return bool(self.files or self.removed)


def plan_push(store: Store, repo: Repo, remote_files: dict[str, ObjectID], base: str | None) -> Plan:
    """The files of the commit to push on top of the remote's: its logs + the local-only events.

    Segments whose blob is the same locally and on the remote hold the same events, so only
    the segments from the first one that differs (or the remote's last) are read and compared:
    a sync costs O(segment), not O(log), however long the log.
    """
    local_paths = _local_paths(store)
    on_disk = gitcommit.working_blob_ids(repo, local_paths)
    by_log_remote = layout.by_log(remote_files)
    by_log_local = layout.by_log(local_paths)
    plan = Plan({}, [], 0, set(), 0, 0, {}, None, "same")
    top: str | None = None
    for log in sorted(set(by_log_remote) | set(by_log_local)):
        r_paths, l_paths = by_log_remote.get(log, []), by_log_local.get(log, [])
        start, prefix = _shared_prefix(store, r_paths, l_paths, remote_files, on_disk)

        def remote_bytes(path: str) -> bytes:
            if on_disk.get(path) == remote_files[path]:
                return read_segment(store.root / path)[0]
            return gitcommit.blob_data(repo, remote_files[path])

        r_data = {p: remote_bytes(p) for p in r_paths[start:]}
        r_lines = [line for p in r_paths[start:] for line in logs.lines_of(r_data[p])]
        l_lines = [line for p in l_paths[start:] for line in logs.lines_of(read_segment(store.root / p)[0])]
        repeats = _has_repeats(r_lines)
        if repeats or r_lines != l_lines:  # else no copy can differ from another
            plan.differ += identity.differing(r_lines, l_lines)
        fixed = logs.repaired(r_lines) if _has_odd(r_lines) or repeats else None
        if fixed is not None and fixed.changed:  # a plain-git merge was pushed: repair it
            plan.repaired += fixed.markers + fixed.duplicates
            r_lines = fixed.lines
        r_ids = logs.id_set(r_lines)
        if r_ids:
            top = max(top or "", max(r_ids)) or None
        if _has_odd(r_lines):
            plan.quarantined += sum(1 for line in r_lines if logs.line_id(line) is None)
        arrived = r_ids - logs.id_set(l_lines)
        plan.pulled += len(arrived)
        plan.newest = max(filter(None, (plan.newest, *arrived)), default=None)
        picked = logs.local_only(l_lines, r_ids)
        if picked.unreadable:
            known = set(r_lines)
            unknown = [line for line in picked.unreadable if line not in known]
            if unknown:
                plan.unreadable[log] = unknown
        events = _not_in(picked.events, prefix)
        if not events and (fixed is None or not fixed.changed):
            continue
        plan.pushed += len(events)
        plan.pushed_ids.update(logs.line_id(line) or "" for line in events)
        folder = layout.log_dir(log)
        laid_out = layout.split_segments(r_lines + events)
        segments = {
            f"{folder}/{layout.segment_name(start + layout.segment_index(name))}": data
            for name, data in laid_out.items()
        }
        for path, data in segments.items():
            if r_data.get(path) != data:
                plan.files[path] = data
        plan.removed += [p for p in r_paths[start:] if p not in segments]
    plan.top_id = top
    _plan_config(store, repo, remote_files, base, plan)
    return plan


def _shared_prefix(
    store: Store,
    r_paths: list[str],
    l_paths: list[str],
    remote_files: dict[str, ObjectID],
    on_disk: dict[str, ObjectID],
) -> tuple[int, Prefix]:
    """How many leading segments are the same blob on both sides and full (1,000 lines), so the
    layout after them does not depend on them; and those segments (to rule out duplicates)."""
    found = shared_segments(store.root, store.local_dir, r_paths, l_paths, remote_files, on_disk)
    return len(found), found


def _has_repeats(lines: list[bytes]) -> bool:
    return len(logs.id_set(lines)) != len(lines)


def _has_odd(lines: list[bytes]) -> bool:
    """Cheap test: does any line not start like a canonical event?"""
    return any(not line.startswith(b'{"id":"') for line in lines)


def _not_in(events: list[bytes], shared: Prefix) -> list[bytes]:
    """`events` less those whose id already occurs in the shared segments (a duplicate only a
    plain-git merge or a hand edit can make)."""
    if not events or not len(shared):
        return events
    known = shared.ids_among({i for i in map(logs.line_id, events) if i is not None})
    return [line for line in events if logs.line_id(line) not in known] if known else events


def _local_paths(store: Store) -> list[str]:
    paths = []
    for log in store.logs():
        folder = layout.log_dir(log)
        paths += [f"{folder}/{name}" for name in layout.segments(store.root, log)]
    return paths


def _plan_config(
    store: Store,
    repo: Repo,
    remote_files: dict[str, ObjectID],
    base: str | None,
    plan: Plan,
) -> None:
    """workspace.json: a local edit since the last sync travels; an edit on both sides keeps
    the remote's (the local one is saved in .local/sync/)."""
    try:
        mine: bytes | None = (store.root / layout.CONFIG_FILE).read_bytes()
    except FileNotFoundError:
        mine = None
    theirs_id = remote_files[layout.CONFIG_FILE]
    if mine is None:
        return
    mine_id = Blob.from_string(mine).id
    if mine_id == theirs_id:
        return
    base_id = _file_at(repo, base, layout.CONFIG_FILE)
    if base_id == mine_id:
        plan.config = "pulled"
    elif base_id is not None and base_id == theirs_id:
        _publishable_settings(mine)
        plan.files[layout.CONFIG_FILE] = mine
        plan.config = "pushed"
    else:  # changed on both sides, or never synced before: the shared one wins
        layout.atomic_write(store.local_dir / "sync" / "workspace.json.local", mine)
        plan.config = "kept-remote"


def _publishable_settings(data: bytes) -> None:
    """A local workspace.json that every replica's intake would refuse is never pushed."""
    problem = intake.settings_problem(data)
    if problem is not None:
        raise SyncError(
            f"the local {layout.CONFIG_FILE} {problem}; nothing was pushed. Fix it, or restore it "
            f"with `git checkout -- {layout.CONFIG_FILE}` in the store, and sync again"
        )


def _file_at(repo: Repo, commit: str | None, path: str) -> ObjectID | None:
    if commit is None:
        return None
    try:
        return gitcommit.tree_files(repo, ObjectID(commit.encode())).get(path)
    except KeyError:
        return None


def keep_aside(store: Store, unreadable: dict[str, list[bytes]]) -> int:
    """Unreadable local lines are not published; they are kept in .local/quarantine/."""
    for log, lines in unreadable.items():
        aside.keep(store.local_dir, log, lines)
    return sum(len(lines) for lines in unreadable.values())


def lost_events(repo: Repo, base: str | None, head: ObjectID, head_files: dict[str, ObjectID]) -> set[str]:
    """Ids the remote held at the last sync and holds no more (its history was rewritten)."""
    if base is None or base.encode() == head:
        return set()
    try:
        base_files = gitcommit.tree_files(repo, ObjectID(base.encode()))
    except KeyError:
        return set()
    lost: set[str] = set()
    head_logs = layout.by_log(head_files)
    for log, paths in layout.by_log(base_files).items():
        theirs = head_logs.get(log, [])
        if _extends(repo, paths, theirs, base_files, head_files):
            continue
        # Segments both commits hold unchanged hold the same ids: only the others are read,
        # unless an id gone from them may have moved into an unchanged one.
        same = {p for p in paths if head_files.get(p) == base_files[p]}
        gone = _ids_of(repo, base_files, [p for p in paths if p not in same])
        gone -= _ids_of(repo, head_files, [p for p in theirs if p not in same])
        if gone:
            gone -= _ids_of(repo, base_files, sorted(same))
        lost |= gone
    return lost


def _ids_of(repo: Repo, files: dict[str, ObjectID], paths: list[str]) -> set[str]:
    return logs.id_set([line for p in paths for line in logs.lines_of(gitcommit.blob_data(repo, files[p]))])


def _extends(
    repo: Repo, paths: list[str], theirs: list[str], base: dict[str, ObjectID], head: dict[str, ObjectID]
) -> bool:
    """The cheap proof of an append: same blobs, and the last one a byte prefix of the new one."""
    if not paths:
        return True
    if any(base[p] != head.get(p) for p in paths[:-1]):
        return False
    last = paths[-1]
    if last not in head:
        return False
    if base[last] == head[last]:
        return True
    return gitcommit.blob_data(repo, head[last]).startswith(gitcommit.blob_data(repo, base[last]))
