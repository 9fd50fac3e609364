"""Where the local history stands against a remote's head, and which way a sync goes.

The protocol rebases the local commits a remote lacks (their events appended after the
remote's), which is safe only while nobody else holds them. A local commit that another
remote holds (reachable from the head it had after the last sync, or from a
`refs/remotes/<name>/main`) is published: rewriting it would fork that remote, so the sync
pushes the local head as it is when the remote's head is in its history, and the
deterministic merge of the two heads when the histories diverged.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from dulwich.objects import ObjectID
from dulwich.repo import Repo


class Way(enum.Enum):
    REBASE = "rebase"  # the usual protocol: local-only events after the remote's, one commit on it
    FORWARD = "forward"  # push the local head itself: a fast-forward for the remote
    MERGE = "merge"  # push the symmetric merge of the local and the remote head


def only_in(repo: Repo, include: list[ObjectID], exclude: list[ObjectID]) -> set[ObjectID]:
    """The commits reachable from `include` and not from `exclude` (git's `include ^exclude`)."""
    present = [c for c in include if c in repo.object_store]
    if not present:
        return set()
    kept = [c for c in exclude if c in repo.object_store]
    return {entry.commit.id for entry in repo.get_walker(include=present, exclude=kept)}


def way(repo: Repo, local: ObjectID | None, remote: ObjectID, published: Iterable[ObjectID]) -> Way:
    """How to sync `local` with the remote head `remote`, given the heads other remotes hold."""
    heads = set(published)
    if local is None or local == remote or not heads:  # one remote: nothing to walk
        return Way.REBASE
    mine = only_in(repo, [local], [remote])
    if not mine or not _holds_any(repo, heads, remote, mine):
        return Way.REBASE
    return Way.MERGE if only_in(repo, [remote], [local]) else Way.FORWARD


def _holds_any(repo: Repo, heads: set[ObjectID], remote: ObjectID, commits: set[ObjectID]) -> bool:
    if heads & commits:  # the usual case: another remote's head is one of them
        return True
    return any(only_in(repo, [head], [remote]) & commits for head in heads)
