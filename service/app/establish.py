"""A remote-backed workspace's store, made from its backend: a clone of the remote's main, or,
when the remote is empty, a new store published there (the first sync)."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from service.adapters.store import Store
from service.adapters.sync import Options, Summary, clone, remotes, sync
from service.adapters.sync.errors import EmptyRemote

if TYPE_CHECKING:
    from service.adapters.data.backends import Backend
    from service.adapters.data.workspaces import Data


def establish(data: Data, name: str, backend: Backend, options: Options) -> Summary:
    """Make DATA/workspaces/NAME a mirror of `backend.url` (it must not hold a store yet); on
    a failure nothing is left there, so the next try starts afresh."""
    target = data.path(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        store, summary = clone(backend.url, target, options)
        store.close()
        return summary
    except EmptyRemote:
        pass
    store = Store.init(target)
    try:
        remotes.add(store.repo, backend.url)
        summary = sync(store, remotes.DEFAULT, options)
    except BaseException:
        store.close()
        shutil.rmtree(target, ignore_errors=True)
        raise
    store.close()
    return summary
