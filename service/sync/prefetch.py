"""The remote's objects brought into a store ahead of its sync, without the store's lock: the
service fetches while its writer keeps committing, so the sync that follows on the writer
thread finds the objects there (and a dead or slow backend never holds the writes back)."""

from __future__ import annotations

from pathlib import Path

from dulwich.repo import Repo

from service.sync import remotes
from service.sync.engine import Options
from service.sync.transport import Connection


def prefetch(root: Path, name: str, options: Options) -> str | None:
    """Fetch remote `name`'s main into the store at `root` through a repository handle of its
    own (as another process would: the objects land in a new pack, no ref moves); the
    remote's head, or None when it has none. Nothing fetched is used before the sync's
    intake gate has checked it."""
    repo = Repo(str(root))
    try:
        conn = Connection(remotes.url_of(repo, name), options.timeout, root, deadline=options.deadline)
        try:
            head = conn.fetch(repo)
        finally:
            conn.close()
    finally:
        repo.close()
    return None if head is None else head.decode("ascii")
