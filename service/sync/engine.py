"""The sync protocol (DESIGN.md, "Sync protocol"); the CLI and the service run this code.

fetch the remote's main R → the local events whose ids R's logs lack → none: fast-forward
to R; else R's logs with those events appended in id order, segmented as always, committed
with R as the only parent and pushed with compare-and-swap against R. A rejected push starts
again from the fetch after a bounded, jittered pause. Nothing is ever force-pushed, and no
local event is dropped: an event the remote lost (its history was rewritten elsewhere) is a
local event the remote lacks, so it is appended again.
"""

from __future__ import annotations

import contextlib
import json
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.pack import full_unpacked_object
from dulwich.refs import Ref
from dulwich.repo import Repo

from service.store import Store, aside, gitcommit, layout
from service.store.errors import RefMoved
from service.store.segments import read_segment
from service.sync import graph, identity, intake, logs, remotes
from service.sync.errors import KeptMoving, SyncError
from service.sync.merge import merge
from service.sync.packing import Placed, thin_records
from service.sync.prefix import Prefix, learn, shared_segments
from service.sync.transport import Activity, Connection, Stage, is_local

DEFAULT_TRIES = 8
DEFAULT_TIMEOUT = 30.0  # seconds any one wait for the remote may take
DEFAULT_DEADLINE = 600.0  # seconds a whole sync or clone may take
Hook = Callable[[str], None]


@dataclass
class Options:
    """How hard to try. `hook(point)` is called at "fetched", "committed" and "pushed"
    (tests use it to race or crash a sync between its steps)."""

    tries: int = DEFAULT_TRIES
    timeout: float = DEFAULT_TIMEOUT
    deadline: float = DEFAULT_DEADLINE
    pause: float = 0.05  # the first pause after a rejected push; doubles up to max_pause
    max_pause: float = 2.0
    activity: Activity | None = None
    stage: Stage | None = None
    hook: Hook | None = None
    rng: random.Random = field(default_factory=random.Random)
    describe: Callable[[SyncError], str] = str  # a failed remote's line in a round (`every.py`)


class Summary(msgspec.Struct):
    """What one sync did."""

    remote: str
    url: str
    head: str | None = None  # the remote's main after the sync (= the local main)
    pulled: int = 0  # events that came from the remote
    pushed: int = 0  # events this sync published
    retries: int = 0  # pushes rejected (others pushed first) and tried again
    created: bool = False  # the remote was empty: the local history was published
    merged: bool = False  # both histories were published: the remote got their merge commit
    rewritten: bool = False  # the remote lost events it once had (a force-push elsewhere)
    restored: int = 0  # of the pushed events, how many the rewritten remote had lost
    quarantined: int = 0  # lines of the remote's logs that are not events (carried as they are)
    repaired: int = 0  # conflict markers and repeated events a plain-git merge left, removed
    kept_aside: int = 0  # unreadable local lines moved to .local/quarantine/, not published
    config: str = "same"  # workspace.json: same | pulled | pushed | kept-remote (both changed)
    bytes_received: int = 0
    bytes_sent: int = 0
    seconds: float = 0.0


# --- the record of the last sync ------------------------------------------------------------


def _record_path(store: Store, name: str) -> Path:
    return store.local_dir / "sync" / f"{name}.json"


def last_synced(store: Store, name: str) -> str | None:
    """The remote head the last successful sync with `name` left (kept in `.local/sync/`)."""
    try:
        data = json.loads(_record_path(store, name).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    head = data.get("head") if isinstance(data, dict) else None
    return head if isinstance(head, str) else None


def _remember(store: Store, name: str, head: ObjectID) -> None:
    tidy_packs(store.repo)
    layout.atomic_write(_record_path(store, name), json.dumps({"head": head.decode()}).encode() + b"\n")
    identity.clear(store.local_dir, name)
    with contextlib.suppress(Exception):
        gitcommit.set_ref(store.repo, Ref(f"refs/remotes/{name}/main".encode()), head)
    if gitcommit.head(store.repo) == head:
        store.synced()


MAX_PACKS = 24


def tidy_packs(repo: Repo, most: int = MAX_PACKS) -> int:
    """Merge the smallest packs when there are more than `most`; returns how many were merged.

    Every fetch and push adds a small pack, and dulwich keeps every pack it looks into open
    (two file descriptors each): unmerged, a store that synced a thousand times runs out of
    descriptors. The smallest packs are merged into one, so the count stays bounded and the
    work per merge stays small (the big pack of a clone is left alone).
    """
    store = repo.object_store
    packs = sorted(store.packs, key=len)
    if len(packs) <= most:
        return 0
    merge = packs[: len(packs) - most // 2]
    objects: dict[bytes, ShaFile] = {}
    for pack in merge:
        for obj in pack.iterobjects():
            objects.setdefault(obj.id, obj)
    merged = store.add_objects([(obj, None) for obj in objects.values()])
    for pack in merge:
        if merged is None or pack.name() != merged.name():
            store._remove_pack(pack)
    store._update_pack_cache()
    return len(merge)


def forget(store: Store, name: str) -> None:
    _record_path(store, name).unlink(missing_ok=True)


def published_elsewhere(store: Store, name: str) -> set[ObjectID]:
    """The heads other remotes hold: each one's head after the last sync with it, and every
    `refs/remotes/<other>/main` (a plain `git fetch` sets those too)."""
    heads: set[ObjectID] = set()
    for path in (store.local_dir / "sync").glob("*.json"):
        found = last_synced(store, path.stem) if path.stem != name else None
        if found is not None:
            heads.add(ObjectID(found.encode("ascii")))
    refs = store.repo.refs
    for ref in refs.keys(base=Ref(b"refs/remotes/")):
        other, _, branch = ref.decode("utf-8", "replace").partition("/")
        if branch == "main" and other != name:
            with contextlib.suppress(KeyError):
                heads.add(refs[Ref(b"refs/remotes/" + ref)])
    return heads


# --- sync -------------------------------------------------------------------------------------


def sync(store: Store, name: str = remotes.DEFAULT, options: Options | None = None) -> Summary:
    """Sync the store with remote `name` until the remote holds every local event."""
    opts = options or Options()
    started = time.monotonic()
    url = remotes.url_of(store.repo, name)
    conn = Connection(url, opts.timeout, store.root, opts.activity, opts.stage, opts.deadline)
    summary = Summary(remote=name, url=conn.shown)
    try:
        for attempt in range(max(1, opts.tries)):
            if attempt:
                summary.retries += 1
                cap = min(opts.max_pause, opts.pause * 2 ** (attempt - 1))
                time.sleep(opts.rng.uniform(cap / 2, cap))
            if _attempt(store, conn, name, opts, summary):
                return summary
        raise KeptMoving(
            f"{conn.shown} kept moving: {opts.tries} pushes in a row were rejected because others "
            "pushed first. Nothing is lost (the events stay in the local store)"
        )
    finally:
        conn.close()
        summary.bytes_received, summary.bytes_sent = conn.received, conn.sent
        summary.seconds = round(time.monotonic() - started, 3)


def _point(opts: Options, name: str) -> None:
    if opts.hook is not None:
        opts.hook(name)


def _push(conn: Connection, repo: Repo, opts: Options, expected: ObjectID | None, new: ObjectID) -> bool:
    """Push `new` over `expected` (None: an empty remote, which gets the whole history)
    between the "committed" and "pushed" hook points; True when the remote took it."""
    _point(opts, "committed")
    thin = not is_local(conn.client)  # an in-process push stores the pack as it is: whole objects
    pack = _pack(repo, new, expected, thin) if expected is not None else None
    reason = conn.push(repo, expected, new, pack=pack)
    _point(opts, "pushed")
    return reason is None


def _attempt(store: Store, conn: Connection, name: str, opts: Options, summary: Summary) -> bool:
    """One fetch-merge-push round; True when the remote holds every local event."""
    repo = store.repo
    remote_head = conn.fetch(repo)
    _point(opts, "fetched")
    if remote_head is None:
        return _publish(store, conn, name, opts, summary)
    remote_files = _intake(store, conn, name, remote_head)
    base = last_synced(store, name)
    lost = _lost_events(repo, base, remote_head, remote_files)
    if lost:
        summary.rewritten = True
    with store.locked():
        local_head = gitcommit.head(repo)
        way = graph.way(repo, local_head, remote_head, published_elsewhere(store, name))
        if local_head is not None and way is not graph.Way.REBASE:  # nothing published is rewritten
            try:
                kept = merge(repo, local_head, remote_head) if way is graph.Way.MERGE else local_head
            except identity.EventsDiffer as differ:
                raise identity.refused(store.local_dir, name, conn.shown, differ.ids) from None
            published = (local_head, remote_head, kept)
        else:
            published = None
            plan = _plan(store, repo, remote_files, base)
            identity.check_horizon(filter(None, [plan.newest]), name, conn.shown)
            if plan.differ:
                raise identity.refused(store.local_dir, name, conn.shown, plan.differ)
            commit = _rebase(store, name, plan, local_head, remote_head, summary)
    if published is not None:
        return _keep_published(store, conn, name, opts, summary, published, lost)
    if commit is None:
        return True
    if not _push(conn, repo, opts, remote_head, commit):
        return False
    with store.locked():
        _remember(store, name, commit)
    summary.head = commit.decode()
    summary.pushed = plan.pushed
    summary.restored = len(lost & plan.pushed_ids)
    return True


def _intake(store: Store, conn: Connection, name: str, remote_head: ObjectID) -> dict[str, ObjectID]:
    """The remote head's files, once the intake gate passed its tree and the events this
    replica lacks, and every commit the fetch brought beyond the local head (a later sync
    with another remote passes them on). The local head's blobs are this replica's own."""
    repo = store.repo
    local = gitcommit.head(repo)
    known = intake.blob_ids(repo, local)
    base = last_synced(store, name)
    since = [h for h in (local, ObjectID(base.encode("ascii")) if base else None) if h is not None]
    return intake.check(repo, remote_head, conn.shown, known=known, local=store.local_facts(), since=since)


def _rebase(
    store: Store, name: str, plan: Plan, local_head: ObjectID | None, remote_head: ObjectID, summary: Summary
) -> ObjectID | None:
    """Under the lock: fast-forward to the remote's head (None: done), or commit the plan on it
    and check the commit out (its id: to push)."""
    summary.pulled += plan.pulled
    summary.quarantined = plan.quarantined
    summary.repaired = plan.repaired
    summary.config = plan.config
    if plan.unreadable:
        summary.kept_aside = _keep_aside(store, plan.unreadable)
    if plan.top_id is not None:
        store.observe([plan.top_id])
    if not plan.changes:
        if local_head != remote_head:
            store.checkout(remote_head.decode(), _text(local_head), "sync: fast-forward")
        _remember(store, name, remote_head)
        summary.head = remote_head.decode()
        summary.pushed = 0
        return None
    message = f"sync: {_count(plan.pushed)} after {remote_head.decode()[:12]}"
    if plan.repaired:
        message += f"; {plan.repaired} merge leftovers removed"
    commit = gitcommit.build_commit(store.repo, plan.files, message, remote_head, removed=plan.removed)
    store.checkout(commit.decode(), _text(local_head), message)
    return commit


def _keep_published(
    store: Store,
    conn: Connection,
    name: str,
    opts: Options,
    summary: Summary,
    heads: tuple[ObjectID, ObjectID, ObjectID],
    lost: set[str],
) -> bool:
    """`heads` is (local, remote, new): push `new` — the local head itself, or its merge with
    the remote's — over the remote's head.

    Unlike a rebase, the merge is checked out only once the push is accepted: a rejected push
    leaves the local head alone, so the next round merges that same head with the remote's
    new one (a function of the pair again) instead of merging a merge.
    """
    local, remote, new = heads
    repo = store.repo
    local_files, remote_files = gitcommit.tree_files(repo, local), gitcommit.tree_files(repo, remote)
    new_files = gitcommit.tree_files(repo, new)
    pulled = _gained(repo, local_files, new_files)
    pushed = _gained(repo, remote_files, new_files)
    identity.check_horizon(pulled, name, conn.shown)
    if pulled:
        store.observe([max(pulled)])
    if not _push(conn, repo, opts, remote, new):
        return False
    with store.locked():
        moved = False
        if new != local:
            try:
                store.checkout(new.decode(), local.decode(), "sync: merge of two published histories")
            except RefMoved:
                moved = True  # a local append came in since: the next round puts it after the merge
        _remember(store, name, new)
    summary.merged = new != local
    if moved:
        return False
    summary.head = new.decode()
    summary.pulled += len(pulled)
    summary.pushed = len(pushed)
    summary.restored = len(lost & pushed)
    summary.config = _config_way(local_files, remote_files, new_files)
    return True


def _gained(repo: Repo, before: dict[str, ObjectID], after: dict[str, ObjectID]) -> set[str]:
    """The event ids `after`'s logs hold and `before`'s do not. Only segments whose blob
    differs are read: a segment both hold at the same path holds the same lines."""
    changed = [p for p, blob in after.items() if layout.log_of_path(p) is not None and before.get(p) != blob]
    gone = [p for p, blob in before.items() if layout.log_of_path(p) is not None and after.get(p) != blob]

    def ids(files: dict[str, ObjectID], paths: list[str]) -> set[str]:
        return {i for p in paths for i in logs.id_set(logs.lines_of(gitcommit.blob_data(repo, files[p])))}

    return ids(after, changed) - ids(before, gone)


def _config_way(local: dict[str, ObjectID], remote: dict[str, ObjectID], new: dict[str, ObjectID]) -> str:
    """workspace.json after a merge or a push of the local head: same | pulled | pushed."""
    key = layout.CONFIG_FILE
    if new.get(key) != local.get(key):
        return "pulled"
    return "pushed" if new.get(key) != remote.get(key) else "same"


def _publish(store: Store, conn: Connection, name: str, opts: Options, summary: Summary) -> bool:
    """An empty remote: push the local history as it is."""
    with store.locked():
        local_head = gitcommit.head(store.repo)
    if local_head is None:
        raise SyncError("the local store has no commit to publish")
    summary.rewritten = last_synced(store, name) is not None  # it had our history once
    if not _push(conn, store.repo, opts, None, local_head):
        return False
    with store.locked():
        _remember(store, name, local_head)
        files = gitcommit.tree_files(store.repo, local_head)
        learn(store.root, store.local_dir, files, gitcommit.working_blob_ids(store.repo, list(files)))
    summary.created = True
    summary.head = local_head.decode()
    summary.pushed = sum(len(store.read(log).events) for log in store.logs())
    return True


# --- what the remote lacks ------------------------------------------------------------------


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


def _plan(store: Store, repo: Repo, remote_files: dict[str, ObjectID], base: str | None) -> Plan:
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
            aside = [line for line in picked.unreadable if line not in known]
            if aside:
                plan.unreadable[log] = aside
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


def _keep_aside(store: Store, unreadable: dict[str, list[bytes]]) -> int:
    """Unreadable local lines are not published; they are kept in .local/quarantine/."""
    for log, lines in unreadable.items():
        aside.keep(store.local_dir, log, lines)
    return sum(len(lines) for lines in unreadable.values())


def _lost_events(repo: Repo, base: str | None, head: ObjectID, head_files: dict[str, ObjectID]) -> set[str]:
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


# --- the pack of a push -----------------------------------------------------------------------


def _pack(
    repo: Repo, commit_id: ObjectID, remote_head: ObjectID, thin: bool = True
) -> Callable[..., tuple[int, Iterator[object]]]:
    """Only what the remote lacks: each commit its head does not reach, with the trees and
    blobs that commit changes against its first parent (the rest the remote has, or another
    of those commits brings). `thin`: each tree and blob as a delta against the remote head's
    object at the same path where that is smaller (`packing.py`); else every object whole.

    (dulwich's own pack walk visits the whole history of the remote's head first.)
    """

    def generate(
        have: object, want: object, *, ofs_delta: bool = False, progress: object = None
    ) -> tuple[int, Iterator[object]]:
        objects: dict[bytes, Placed] = {}
        for commit in sorted(graph.only_in(repo, [commit_id], [remote_head])):
            found = repo[commit]
            assert isinstance(found, Commit)
            parent = found.parents[0] if found.parents else None
            for obj, path in _new_objects(repo, commit, parent):
                objects.setdefault(obj.id, (obj, path))
        if not thin:
            return len(objects), iter([full_unpacked_object(o) for o, _ in objects.values()])
        remote = repo[remote_head]
        assert isinstance(remote, Commit)
        records = thin_records(repo, objects.values(), remote.tree)
        return len(records), iter(records)

    return generate


def _new_objects(repo: Repo, commit_id: ObjectID, parent_id: ObjectID | None) -> list[Placed]:
    """The commit and the trees and blobs it changes against its parent, each with its path
    in the commit's tree ("" the root tree, None the commit)."""
    commit = repo[commit_id]
    assert isinstance(commit, Commit)
    old_tree: ObjectID | None = None
    if parent_id is not None:
        parent = repo[parent_id]
        assert isinstance(parent, Commit)
        old_tree = parent.tree
    out: dict[bytes, Placed] = {commit.id: (commit, None)}
    stack: list[tuple[ObjectID, ObjectID | None, str]] = [(commit.tree, old_tree, "")]
    while stack:
        new_id, old_id, where = stack.pop()
        if new_id == old_id or new_id in out:
            continue
        tree = repo[new_id]
        assert isinstance(tree, Tree)
        out[tree.id] = (tree, where)
        old_entries: dict[bytes, tuple[int, ObjectID]] = {}
        if old_id is not None:
            before_tree = repo[old_id]
            assert isinstance(before_tree, Tree)
            old_entries = {e.path: (e.mode, e.sha) for e in before_tree.iteritems()}
        for entry in tree.iteritems():
            before = old_entries.get(entry.path)
            if before is not None and before[1] == entry.sha:
                continue
            name = entry.path.decode("utf-8")
            path = f"{where}/{name}" if where else name
            if entry.mode == gitcommit.DIR_MODE:
                previous = before[1] if before is not None and before[0] == gitcommit.DIR_MODE else None
                stack.append((entry.sha, previous, path))
            elif entry.sha not in out:
                out[entry.sha] = (repo[entry.sha], path)
    return list(out.values())


def _count(n: int) -> str:
    return "1 event" if n == 1 else f"{n} events"


def _text(sha: ObjectID | None) -> str | None:
    return None if sha is None else sha.decode("ascii")


__all__ = ["Options", "RefMoved", "Summary", "forget", "last_synced", "sync"]
