"""One sync of a live workspace with its backend, run by the workspace's writer thread as an
`alone` job (`Writer.submit_alone_async`): under the store lock, between two group commits,
with the states folding the store's head. When main moved, the states follow it and the events
it brought go to the live stream, whether or not the push that followed went through: events
that only extend their logs (each after its log's last id, the usual fetch) are folded on the
states in memory (`LiveWorkspace.advanced`); anything else (a rebase that put fetched events
before local ones, a merge, new settings) folds the new head through the fold cache
(`LiveWorkspace.moved_to`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.model import order
from service.sync import Options, Summary, remotes, sync
from service.sync.brought import brought, in_order, settings_changed

if TYPE_CHECKING:
    from service.live.space import LiveWorkspace
    from service.model.events import Event


def sync_live(live: LiveWorkspace, options: Options) -> Summary:
    """The sync protocol with remote `origin` (the same code as `self sync`); the workspace's
    states and stream follow main wherever it ends."""
    before = live.store.head()
    try:
        return sync(live.store, remotes.DEFAULT, options)
    finally:
        after = live.store.head()
        if after is not None and after != before:
            follow(live, before, after)


def follow(live: LiveWorkspace, before: str | None, after: str) -> None:
    """The states and the stream from main at `before` (what they fold) to `after`."""
    repo = live.store.repo
    events = brought(repo, before, after)
    if before is not None and not settings_changed(repo, before, after) and _appends(live, events):
        live.advanced(after, events)
    else:
        live.moved_to(in_order(events))


def _appends(live: LiveWorkspace, events: dict[str, list[Event]]) -> bool:
    """Whether each log's new events all come after its last id (the fold of the whole log is
    then the fold of the state with them on top)."""
    for log, batch in events.items():
        if order.not_after((e.id for e in batch), live.state(log)[0].last_id) is not None:
            return False
    return True
