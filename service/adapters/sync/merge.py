"""The deterministic symmetric merge of two diverged published histories.

Needed only when two published histories diverged (two remotes, or a branch merged by
plain git): each log becomes the lines both share at the start, then the union of both
tails, one copy per id, in id order (lines that are not events follow, sorted, once). Two
copies of an id in other bytes are never chosen between: the merge raises
`identity.EventsDiffer`. The merge commit is a function of the pair alone: parents sorted,
a fixed identity, the later parent's time, a fixed message. So two replicas merging the
same pair make the same commit, byte for byte, and no merge storm follows.

The engine pushes a merge with compare-and-swap in the same retry loop as a rebase, the pack
holding every commit the remote lacks, each with what it changes against its first parent. A
merge is checked out only after its push is accepted: a rejected push leaves the local head
alone, so the next round merges that same head with the remote's new one instead of merging a
merge. `tests/integration/test_sync_two_remotes.py` syncs a replica with X, then Y, then X
again and finds both on one commit, every push a fast-forward.
"""

from __future__ import annotations

from dulwich.objects import Commit, ObjectID
from dulwich.repo import Repo

from service.adapters.store import gitcommit, layout
from service.adapters.sync import identity, logs
from service.core.events import order

IDENTITY = b"selfhub <selfhub@localhost>"
MESSAGE = b"merge: the union of two histories, in id order\n"


def merged_lines(ours: list[bytes], theirs: list[bytes]) -> list[bytes]:
    """Common prefix + the id-ordered union of the two tails (symmetric in its arguments).

    Raises identity.EventsDiffer when a tail holds an id in other bytes than another copy."""
    shared = 0
    for a, b in zip(ours, theirs, strict=False):
        if a != b:
            break
        shared += 1
    prefix = ours[:shared]
    in_prefix: dict[str, bytes] = {}
    for line in prefix:
        found = logs.line_id(line)
        if found is not None:
            in_prefix.setdefault(found, line)
    named: list[tuple[str, bytes]] = []
    other: set[bytes] = set()
    for line in ours[shared:] + theirs[shared:]:
        if logs.is_marker(line):
            continue
        found = logs.line_id(line)
        if found is not None:
            named.append((found, line))
        elif line not in prefix:
            other.add(line)
    union = order.distinct([*in_prefix.items(), *named], _id_of, _rank)
    if union.conflicts:
        raise identity.EventsDiffer(union.conflicts)
    fresh = [line for found, line in union.kept if found not in in_prefix]
    return prefix + fresh + sorted(other)


def _id_of(pair: tuple[str, bytes]) -> str:
    return pair[0]


def _rank(pair: tuple[str, bytes]) -> order.Rank:
    return order.line_rank(pair[1])  # moot: copies that differ are refused


def merge(repo: Repo, a: ObjectID, b: ObjectID) -> ObjectID:
    """The merge commit of `a` and `b` (both in `repo`'s objects); `a` itself if they are equal."""
    if a == b:
        return a
    first, second = sorted([a, b])
    ca, cb = repo[first], repo[second]
    assert isinstance(ca, Commit) and isinstance(cb, Commit)
    fa, fb = gitcommit.tree_files(repo, first), gitcommit.tree_files(repo, second)
    later = fa if (ca.commit_time, first) > (cb.commit_time, second) else fb
    files: dict[str, bytes] = {}
    by_log: dict[str, tuple[list[str], list[str]]] = {}
    for side, tree in ((0, fa), (1, fb)):
        for path in tree:
            log = layout.log_of_path(path)
            if log is None:
                continue
            by_log.setdefault(log, ([], []))[side].append(path)
    for path in sorted(set(fa) | set(fb)):
        if layout.log_of_path(path) is not None:
            continue
        if path in fa and path in fb and fa[path] != fb[path]:
            files[path] = gitcommit.blob_data(repo, later[path])
        else:
            files[path] = gitcommit.blob_data(repo, (fa if path in fa else fb)[path])
    for log, (pa, pb) in sorted(by_log.items()):
        la = [line for p in sorted(pa) for line in logs.lines_of(gitcommit.blob_data(repo, fa[p]))]
        lb = [line for p in sorted(pb) for line in logs.lines_of(gitcommit.blob_data(repo, fb[p]))]
        folder = layout.log_dir(log)
        for name, data in layout.split_segments(merged_lines(la, lb)).items():
            files[f"{folder}/{name}"] = data
    commit = Commit()
    commit.tree = gitcommit.build_tree(repo, files)
    commit.parents = [first, second]
    commit.author = commit.committer = IDENTITY
    commit.author_time = commit.commit_time = max(ca.commit_time, cb.commit_time)
    commit.author_timezone = commit.commit_timezone = 0
    commit.encoding = b"UTF-8"
    commit.message = MESSAGE
    repo.object_store.add_object(commit)
    return commit.id
