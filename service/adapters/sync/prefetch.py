"""The remote's objects brought into a store ahead of its sync, without the store's lock: the
service fetches while its writer keeps committing, then the sync on the writer thread starts
from what this fetch brought (`engine.Fetched`) instead of fetching again, so a round with the
backend is one fetch (and a push when there is something to push); a dead or slow backend
fails here and never holds the writes back."""

from __future__ import annotations

from pathlib import Path

from dulwich.repo import Repo

from service.adapters.sync import remotes
from service.adapters.sync.engine import Fetched, Options
from service.adapters.sync.transport import Connection


def prefetch(root: Path, name: str, options: Options) -> Fetched:
    """Fetch remote `name`'s main into the store at `root` through a repository handle of its
    own (as another process would: the objects land in a new pack, no ref moves): the
    remote's head (None when it has none) for `sync(…, fetched=…)`. Nothing fetched is used
    before the sync's intake gate has checked it."""
    repo = Repo(str(root))
    try:
        url = remotes.url_of(repo, name)
        conn = Connection(url, options.timeout, root, deadline=options.deadline)
        try:
            head = conn.fetch(repo)
        finally:
            conn.close()
    finally:
        repo.close()
    return Fetched(url, head, conn.received)
