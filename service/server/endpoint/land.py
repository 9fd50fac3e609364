"""A checked push moves main: run by the workspace's writer thread, alone, under the store
lock, so it is ordered with the API's group commits and every other push (the
compare-and-swap is against the head the states fold, which nothing else moves meanwhile).

The push gate (`adapters/sync/pushed.py`) runs the intake gate with the store's head as its `base`, so
only the subtrees the push changed are read, and finds the appended lines through
`adapters/store/treediff.py`. `Store.advance` checks out only the changed paths (the store is written
only through the service), makes the pack and its checkout mark durable with one `syncfs`
before main moves and the files with one after, and leaves `.git/index` to the writer's idle
moment. `LiveWorkspace.follow` folds the new events in memory when they come after each log's
last id, else through the fold cache; the stream gets them before the push is answered.

Before main moves, the events pass the admission a post passes (`pushed.admit`, on the live
states: they fold the head main is at) and the push is recorded beside the store, machine-local:
the pushing token's user is the author of record of what it brought (`adapters/store/pushes.py`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from dulwich.objects import ObjectID

from service.adapters.store import durable, pushes
from service.adapters.sync import pushed
from service.adapters.sync.brought import settings_changed
from service.adapters.sync.pushed import Pushed, Stale
from service.adapters.sync.remembered import tidy_packs
from service.server.endpoint.incoming import Incoming
from service.server.endpoint.receiving import ZERO

if TYPE_CHECKING:
    from service.adapters.auth.tokens import Grant
    from service.server.live.space import LiveWorkspace


def land(live: LiveWorkspace, incoming: Incoming, old: str, new: str, where: str, by: Grant) -> Pushed:
    """Move main from `old` to `new` once the push gate passed it; its events then fold and
    stream, `by`'s user (the pushing token's) recorded as who pushed them. Stale when main is
    not at `old`; a PushRefused when the gate refuses."""
    store = live.store
    head = store.head()
    expected = None if old == ZERO else old
    if head != expected:
        raise Stale(expected, head)
    current = None if head is None else ObjectID(head.encode("ascii"))
    target = ObjectID(new.encode("ascii"))
    found = pushed.check(incoming.repo, store, current, target, where, incoming.holds)
    if head == new:
        return found
    admin = by.role == "admin"  # a workspace admin may push an imported store's history
    pushed.admit(found, lambda log: live.state(log)[0], store.config(), store.root, imports=admin)
    brought = (pushes.Brought(e.id, e.origin.by) for e in found.all_events())
    pushes.record(store.local_dir, new, by.user, brought)  # made durable with the objects, before main moves
    incoming.keep()
    if head is None:
        _flush(store.root)  # the objects are durable before main names them
        store.checkout(new, head, "push")
        _flush(store.root)
    else:  # the objects are made durable with the checkout mark, before main moves
        _, written = store.advance(new, head, "push")
        live.writer.unindexed(written)
    reload = head is None or settings_changed(store.repo, head, new)
    live.follow(new, found.events, reload)
    tidy_packs(store.repo)  # a pack a push: merged while they are few and small
    return found


def _flush(root: Path) -> None:
    if not durable.flush(root):
        os.sync()
