"""`self sync` with no remote named: every remote, until all of them hold the local head.

Remotes are synced in name order. A sync that merged (a history published elsewhere) or
pulled moves the local head past what the remotes synced before it hold, so those are
synced once more: in that second round each of them only fast-forwards, unless someone
pushed meanwhile. Two replicas that sync the same remotes this way leave them on one commit
instead of each pushing merges the other then merges again.

A remote that fails is named and the others are still synced
(`tests/integration/test_sync_every.py`).
"""

from __future__ import annotations

import msgspec

from service.adapters.store import Store, gitcommit
from service.adapters.sync import remotes
from service.adapters.sync.engine import Options, Summary, sync
from service.adapters.sync.errors import NoRemote, SyncError


class Failure(msgspec.Struct):
    """A remote whose sync failed; the others were still synced."""

    remote: str
    error: str


class Round(msgspec.Struct):
    """What syncing every remote did: each sync in order, failures, and the totals."""

    syncs: list[Summary]
    failed: list[Failure]
    head: str | None
    pulled: int = 0
    pushed: int = 0
    retries: int = 0


def sync_selected(store: Store, name: str | None, options: Options | None = None) -> Summary | Round:
    """`self sync [NAME]`: the remote named; with none named, the only one, or every one."""
    names = [row["name"] for row in remotes.listed(store.repo)]
    if name is None and len(names) != 1:
        return sync_every(store, options)  # none: it says how to add one
    return sync(store, name or names[0], options)


def sync_every(store: Store, options: Options | None = None) -> Round:
    """Sync with every remote (name order), then again with those left behind the local head."""
    names = [row["name"] for row in remotes.listed(store.repo)]
    if not names:
        raise NoRemote("no remote yet")
    syncs: list[Summary] = []
    failed: dict[str, Failure] = {}
    for name in names:
        _one(store, name, options, syncs, failed)
    head = _head(store)
    behind = [s.remote for s in syncs if s.head != head and s.remote not in failed]
    for name in dict.fromkeys(behind):
        _one(store, name, options, syncs, failed)
    return Round(
        syncs=syncs,
        failed=list(failed.values()),
        head=_head(store),
        pulled=sum(s.pulled for s in syncs),
        pushed=sum(s.pushed for s in syncs),
        retries=sum(s.retries for s in syncs),
    )


def _one(
    store: Store, name: str, options: Options | None, syncs: list[Summary], failed: dict[str, Failure]
) -> None:
    try:
        syncs.append(sync(store, name, options))
    except SyncError as exc:
        failed[name] = Failure(name, (options or Options()).describe(exc))


def _head(store: Store) -> str | None:
    head = gitcommit.head(store.repo)
    return head.decode() if head is not None else None
