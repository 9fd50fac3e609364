"""One sync of a live workspace with its backend, run by the workspace's writer thread as an
`alone` job (`Writer.submit_alone_async`): under the store lock, between two group commits,
with the states folding the store's head. When main moved (a fetch brought events, a rebase
put the local ones after them), the states fold the new head and the events it brought go
to the live stream (`LiveWorkspace.moved_to`), whether or not the push that followed went
through."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.sync import Options, Summary, remotes, sync
from service.sync.brought import brought

if TYPE_CHECKING:
    from service.live.space import LiveWorkspace


def sync_live(live: LiveWorkspace, options: Options) -> Summary:
    """The sync protocol with remote `origin` (the same code as `self sync`); the workspace's
    states and stream follow main wherever it ends."""
    before = live.store.head()
    try:
        return sync(live.store, remotes.DEFAULT, options)
    finally:
        after = live.store.head()
        if after is not None and after != before:
            live.moved_to(brought(live.store.repo, before, after))
