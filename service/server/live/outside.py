"""A write into a hosted store that did not come through the service — a CLI on the data
directory, a `git push` over ssh or to the store's path — is a way in like any other: before
the service folds it, the push gate (`adapters/sync/pushed.py`) judges what it brought since the head
the states fold, as it judges a push to the git endpoint.

Passed, its events are folded (in memory when they only extend their logs) and streamed.
Refused, main goes back to that head and the refused commit is kept under
`refs/selfhub/refused/<commit>`: nothing is lost, nothing of it is served, and an operator
finds it there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dulwich.objects import ObjectID
from dulwich.refs import Ref

from service.adapters.store import gitcommit
from service.adapters.sync import pushed
from service.adapters.sync.brought import settings_changed

if TYPE_CHECKING:
    from service.server.live.space import LiveWorkspace

REFUSED = "refs/selfhub/refused/"
WHERE = "a write into the store from outside the service"


def catch_up(live: LiveWorkspace) -> None:
    """Fold what moved the store's head under the service (something other than this
    service wrote into the store), once the push gate passed it."""
    if live.settled():
        return
    with live.loading, live.store.locked():  # the writer's batch in flight ends first
        take(live)


def take(live: LiveWorkspace) -> None:
    """Fold or refuse what moved main under the service (the store lock held)."""
    store, old = live.store, live.head
    new = store.head()
    if new == old or new is None:
        return
    if old is None:  # nothing was served yet: there is no published history to keep
        live.load()
        live.feed.publish_missing(store)
        return
    current, target = ObjectID(old.encode("ascii")), ObjectID(new.encode("ascii"))
    try:
        found = pushed.check(store.repo, store, current, target, WHERE, lambda _: True)
    except pushed.PushRefused as exc:
        _refuse(live, old, new)
        live.observer.outside_write(live.name, 0, exc.code, new)
        return
    store.match_head()  # a git push moves main, not the files
    events = found.events
    live.observer.fold_lag(live.name, sum(len(batch) for batch in events.values()))
    live.follow(new, events, settings_changed(store.repo, old, new))
    live.observer.fold_lag(live.name, 0)
    live.observer.outside_write(live.name, sum(len(batch) for batch in events.values()), None, new)


def _refuse(live: LiveWorkspace, old: str, new: str) -> None:
    """Keep `new` aside and put main back at `old`, the head the states fold."""
    repo = live.store.repo
    target = ObjectID(new.encode("ascii"))
    gitcommit.set_ref(repo, Ref(f"{REFUSED}{new}".encode("ascii")), target)
    back = ObjectID(old.encode("ascii"))
    gitcommit.move_branch(repo, target, back, "refused: a write from outside the service")
    live.store.match_head()
