"""What differs between two commits' trees, read by walking only the subtrees whose ids
differ: the cost of a comparison is what changed, not the size of the store."""

from __future__ import annotations

from dulwich.diff_tree import tree_changes
from dulwich.errors import NotTreeError
from dulwich.object_store import tree_lookup_path
from dulwich.objects import Commit, ObjectID, Tree
from dulwich.repo import Repo

from service.adapters.store import layout

Change = tuple[ObjectID | None, ObjectID | None]  # the blob before and after (None: absent)


def changed_files(repo: Repo, old: ObjectID | None, new: ObjectID | None) -> dict[str, Change]:
    """Every file path whose blob differs between commits `old` and `new` (None: no commit),
    with its blob in each. Subtrees with equal ids are never read."""
    found: dict[str, Change] = {}
    for change in tree_changes(repo.object_store, _tree_id(repo, old), _tree_id(repo, new)):
        for entry, side in ((change.old, 0), (change.new, 1)):
            if entry is None or entry.path is None or entry.sha is None:
                continue
            path = entry.path.decode("utf-8")
            before, after = found.get(path, (None, None))
            found[path] = (entry.sha, after) if side == 0 else (before, entry.sha)
    return found


def log_files(repo: Repo, commit: ObjectID | None, log: str) -> dict[str, ObjectID]:
    """The segments one log holds in `commit`: path → blob id (empty when it has none)."""
    tree_id = _tree_id(repo, commit)
    if tree_id is None:
        return {}
    folder = layout.log_dir(log)
    try:
        _, sha = tree_lookup_path(repo.__getitem__, tree_id, folder.encode("utf-8"))
    except (KeyError, NotTreeError):
        return {}
    tree = repo[sha]
    if not isinstance(tree, Tree):
        return {}
    out: dict[str, ObjectID] = {}
    for entry in tree.iteritems():
        path = f"{folder}/{entry.path.decode('utf-8')}"
        if layout.log_of_path(path) == log:
            out[path] = entry.sha
    return out


def file_id(repo: Repo, commit: ObjectID | None, path: str) -> ObjectID | None:
    """The blob at `path` in `commit`, None when there is none."""
    tree_id = _tree_id(repo, commit)
    if tree_id is None:
        return None
    try:
        _, sha = tree_lookup_path(repo.__getitem__, tree_id, path.encode("utf-8"))
    except (KeyError, NotTreeError):
        return None
    return sha


def _tree_id(repo: Repo, commit: ObjectID | None) -> ObjectID | None:
    if commit is None:
        return None
    found = repo[commit]
    assert isinstance(found, Commit)
    tree: ObjectID = found.tree
    return tree
