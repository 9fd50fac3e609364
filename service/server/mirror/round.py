"""One sync of a live workspace with its backend, run by the workspace's writer thread as an
`alone` job (`Writer.submit_alone_async`): under the store lock, between two group commits,
with the states folding the store's head. When main moved, the states follow it and the events
it brought go to the live stream, whether or not the push that followed went through: events
that only extend their logs (each after its log's last id, the usual fetch) are folded on the
states in memory (`LiveWorkspace.advanced`); anything else (a rebase that put fetched events
before local ones, a merge, new settings) folds the new head through the fold cache
(`LiveWorkspace.moved_to`).

`tests/integration/test_mirror_round.py` holds the states a sync leaves to a refold, whether
the fetch only appended or put fetched events before local ones, and the stream to exactly the
events it brought; and a round to one connection for a pull and two for a push, counted at a
proxy in front of `git daemon`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.adapters.sync import Options, Summary, remotes, sync
from service.adapters.sync.brought import brought, settings_changed
from service.adapters.sync.engine import Fetched

if TYPE_CHECKING:
    from service.server.live.space import LiveWorkspace


def sync_live(live: LiveWorkspace, options: Options, fetched: Fetched | None = None) -> Summary:
    """The sync protocol with remote `origin` (the same code as `self sync`), starting from
    `fetched` (the round's prefetch) when given; the workspace's states and stream follow
    main wherever it ends."""
    before = live.store.head()
    try:
        return sync(live.store, remotes.DEFAULT, options, fetched)
    finally:
        after = live.store.head()
        if after is not None and after != before:
            follow(live, before, after)


def follow(live: LiveWorkspace, before: str | None, after: str) -> None:
    """The states and the stream from main at `before` (what they fold) to `after`."""
    repo = live.store.repo
    events = brought(repo, before, after)
    live.follow(after, events, reload=before is None or settings_changed(repo, before, after))
