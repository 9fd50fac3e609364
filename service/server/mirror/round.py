"""One sync of a live workspace with its backend, run by the workspace's writer thread as an
`alone` job (`Writer.submit_alone_async`): under the store lock, between two group commits,
with the states folding the store's head. When main moved, the states follow it and the events
it brought go to the live stream, whether or not the push that followed went through: events
that only extend their logs (each after its log's last id, the usual fetch) are folded on the
states in memory (`LiveWorkspace.advanced`); anything else (a rebase that put fetched events
before local ones, a merge, new settings) folds the new head through the fold cache
(`LiveWorkspace.moved_to`).

A round's prefetch may be older than what the store last synced: the writer pushed a batch
(`--replicated`) or another round synced while it fetched. Starting from it would rebase onto
a head the backend has left and push in vain, then pause and fetch again, all on the writer:
such a prefetch is dropped (`stale`), and the round has nothing to do when main is the head
last synced, else it fetches again.

`tests/integration/test_mirror_round.py` holds the states a sync leaves to a refold, whether
the fetch only appended or put fetched events before local ones, and the stream to exactly the
events it brought; and a round to one connection for a pull and two for a push, counted at a
proxy in front of `git daemon`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dulwich.objects import ObjectID

from service.adapters.sync import Options, Summary, remotes, sync
from service.adapters.sync.brought import brought, settings_changed
from service.adapters.sync.engine import Fetched
from service.adapters.sync.graph import only_in
from service.adapters.sync.remembered import last_synced

if TYPE_CHECKING:
    from service.server.live.space import LiveWorkspace


def sync_live(live: LiveWorkspace, options: Options, fetched: Fetched | None = None) -> Summary:
    """The sync protocol with remote `origin` (the same code as `self sync`), starting from
    `fetched` (the round's prefetch) when given; the workspace's states and stream follow
    main wherever it ends."""
    before = live.store.head()
    if fetched is not None and stale(live, fetched):
        if before is not None and before == last_synced(live.store, remotes.DEFAULT):
            return Summary(remotes.DEFAULT, "", head=before)  # the backend holds main already
        fetched = None
    try:
        return sync(live.store, remotes.DEFAULT, options, fetched)
    finally:
        after = live.store.head()
        if after is not None and after != before:
            follow(live, before, after)


def stale(live: LiveWorkspace, fetched: Fetched) -> bool:
    """`fetched` brought a head older than the one the store last synced: an ancestor of it."""
    known = last_synced(live.store, remotes.DEFAULT)
    if fetched.head is None or known is None or fetched.head.decode("ascii") == known:
        return False
    repo = live.store.repo
    if fetched.head not in repo.object_store:
        return False
    return not only_in(repo, [fetched.head], [ObjectID(known.encode("ascii"))])


def follow(live: LiveWorkspace, before: str | None, after: str) -> None:
    """The states and the stream from main at `before` (what they fold) to `after`."""
    repo = live.store.repo
    events = brought(repo, before, after)
    live.follow(after, events, reload=before is None or settings_changed(repo, before, after))
