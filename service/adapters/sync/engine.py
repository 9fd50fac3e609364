"""The sync protocol (DESIGN.md, "Sync protocol"); the CLI and the service run this code.

fetch the remote's main R → the local events whose ids R's logs lack → none: fast-forward
to R; else R's logs with those events appended in id order, segmented as always, committed
with R as the only parent and pushed with compare-and-swap against R. A rejected push starts
again from the fetch after a bounded, jittered pause. Nothing is ever force-pushed, and no
local event is dropped: an event the remote lost (its history was rewritten elsewhere) is a
local event the remote lacks, so it is appended again.

A sync given what a fetch just brought (`Fetched`: the service's prefetch, `prefetch.py`)
starts from that head instead of fetching again: the intake gate checks what was fetched as
it checks what its own fetch brings, and the push's compare-and-swap is against that head, so
a remote that moved since turns the push away and the next attempt fetches.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec
from dulwich.objects import ObjectID
from dulwich.repo import Repo

from service.adapters.store import Store, gitcommit, layout
from service.adapters.store.errors import RefMoved
from service.adapters.sync import graph, identity, intake, logs, remembered, remotes
from service.adapters.sync.errors import KeptMoving, SyncError
from service.adapters.sync.merge import merge
from service.adapters.sync.packing import push_pack
from service.adapters.sync.plan import Plan, keep_aside, lost_events, plan_push
from service.adapters.sync.prefix import learn
from service.adapters.sync.transport import Activity, Connection, Stage, is_local

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
    at_once: int = 0  # rejected pushes tried again at once, before the pauses start
    activity: Activity | None = None
    stage: Stage | None = None
    hook: Hook | None = None
    rng: random.Random = field(default_factory=random.Random)
    describe: Callable[[SyncError], str] = str  # a failed remote's line in a round (`every.py`)


@dataclass(frozen=True)
class Fetched:
    """What a fetch from `url` just brought into the store, for a sync to start from: the
    remote's main (None: the remote had none) and the bytes it took."""

    url: str = field(repr=False)  # whole, as `remotes.url_of` gives it: never shown
    head: ObjectID | None
    received: int = 0


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
    paused: float = 0.0  # of them, the pauses between rejected pushes and the next attempt


# --- sync -------------------------------------------------------------------------------------


def sync(
    store: Store, name: str = remotes.DEFAULT, options: Options | None = None, fetched: Fetched | None = None
) -> Summary:
    """Sync the store with remote `name` until the remote holds every local event. Given
    `fetched` (a fetch from the same URL that just brought the remote's head into the
    store), the first attempt starts from that head without fetching again."""
    opts = options or Options()
    started = time.monotonic()
    url = remotes.url_of(store.repo, name)
    conn = Connection(url, opts.timeout, store.root, opts.activity, opts.stage, opts.deadline)
    summary = Summary(remote=name, url=conn.shown)
    given = _usable(store, url, fetched)
    try:
        for attempt in range(max(1, opts.tries)):
            if attempt:
                summary.retries += 1
                summary.paused += _pause(opts, attempt)
            if _attempt(store, conn, name, opts, summary, given if attempt == 0 else None):
                return summary
        raise KeptMoving(
            f"{conn.shown} kept moving: {opts.tries} pushes in a row were rejected because others "
            "pushed first. Nothing is lost (the events stay in the local store)"
        )
    finally:
        conn.close()
        summary.bytes_received = conn.received + (given.received if given is not None else 0)
        summary.bytes_sent = conn.sent
        summary.seconds = round(time.monotonic() - started, 3)
        summary.paused = round(summary.paused, 3)


def _pause(opts: Options, attempt: int) -> float:
    """Before attempt `attempt` (1 on): none for the first `opts.at_once` (a rejected push means
    another just landed, so the remote is likely still for a moment), then a jittered pause
    from `opts.pause`, doubling up to `opts.max_pause`. The seconds paused."""
    late = attempt - opts.at_once
    if late <= 0:
        return 0.0
    cap = min(opts.max_pause, opts.pause * 2 ** (late - 1))
    pause = opts.rng.uniform(cap / 2, cap)
    time.sleep(pause)
    return pause


def _usable(store: Store, url: str, fetched: Fetched | None) -> Fetched | None:
    """`fetched` when it can stand for the first attempt's fetch: from the remote's URL as it
    is now, its head's objects in the store (else None: the sync fetches)."""
    if fetched is None or fetched.url != url:
        return None
    if fetched.head is not None and fetched.head not in store.repo.object_store:
        return None
    return fetched


def _point(opts: Options, name: str) -> None:
    if opts.hook is not None:
        opts.hook(name)


def _push(conn: Connection, repo: Repo, opts: Options, expected: ObjectID | None, new: ObjectID) -> bool:
    """Push `new` over `expected` (None: an empty remote, which gets the whole history)
    between the "committed" and "pushed" hook points; True when the remote took it."""
    _point(opts, "committed")
    thin = not is_local(conn.client)  # an in-process push stores the pack as it is: whole objects
    pack = push_pack(repo, new, expected, thin) if expected is not None else None
    reason = conn.push(repo, expected, new, pack=pack)
    _point(opts, "pushed")
    return reason is None


def _attempt(
    store: Store, conn: Connection, name: str, opts: Options, summary: Summary, fetched: Fetched | None
) -> bool:
    """One fetch-merge-push round (the fetch `fetched`, when given); True when the remote
    holds every local event."""
    repo = store.repo
    remote_head = fetched.head if fetched is not None else conn.fetch(repo)
    _point(opts, "fetched")
    if remote_head is None:
        return _publish(store, conn, name, opts, summary)
    remote_files = _intake(store, conn, name, remote_head)
    base = remembered.last_synced(store, name)
    lost = lost_events(repo, base, remote_head, remote_files)
    if lost:
        summary.rewritten = True
    with store.locked():
        local_head = gitcommit.head(repo)
        way = graph.way(repo, local_head, remote_head, remembered.published_elsewhere(store, name))
        if local_head is not None and way is not graph.Way.REBASE:  # nothing published is rewritten
            try:
                kept = merge(repo, local_head, remote_head) if way is graph.Way.MERGE else local_head
            except identity.EventsDiffer as differ:
                raise identity.refused(store.local_dir, name, conn.shown, differ.ids) from None
            published = (local_head, remote_head, kept)
        else:
            published = None
            plan = plan_push(store, repo, remote_files, base)
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
        remembered.remember(store, name, commit)
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
    base = remembered.last_synced(store, name)
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
        summary.kept_aside = keep_aside(store, plan.unreadable)
    if plan.top_id is not None:
        store.observe([plan.top_id])
    if not plan.changes:
        if local_head != remote_head:
            store.checkout(remote_head.decode(), _text(local_head), "sync: fast-forward")
        remembered.remember(store, name, remote_head)
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
        remembered.remember(store, name, new)
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
    summary.rewritten = remembered.last_synced(store, name) is not None  # it had our history once
    if not _push(conn, store.repo, opts, None, local_head):
        return False
    with store.locked():
        remembered.remember(store, name, local_head)
        files = gitcommit.tree_files(store.repo, local_head)
        learn(store.root, store.local_dir, files, gitcommit.working_blob_ids(store.repo, list(files)))
    summary.created = True
    summary.head = local_head.decode()
    summary.pushed = sum(len(store.read(log).events) for log in store.logs())
    return True


def _count(n: int) -> str:
    return "1 event" if n == 1 else f"{n} events"


def _text(sha: ObjectID | None) -> str | None:
    return None if sha is None else sha.decode("ascii")


__all__ = ["Options", "RefMoved", "Summary", "sync"]
