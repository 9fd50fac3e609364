"""Read-only facts of the code checkout a coding agent works in (dulwich): for the action gate,
whether the files a command would overwrite exist, the branch checked out and its upstream; for
a work unit's outcome, the checkout's head and the files changed between two commits."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from service.core.errors import Invalid
from service.core.gates.destructive import Checkout, Questions


def head(path: Path) -> str | None:
    """The head commit of the checkout at `path` (None outside git, or before a first commit)."""
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    try:
        with Repo(str(path)) as repo:
            return repo.head().decode()
    except (NotGitRepository, KeyError, OSError):
        return None


def changed(path: Path, start: str, end: str | None) -> tuple[str, set[str]]:
    """The commit the span ends at (`end`, else the checkout's head) and every path changed
    between `start` and it; Invalid when the checkout lacks one of the two commits."""
    from dulwich.diff_tree import tree_changes
    from dulwich.objects import Commit
    from dulwich.repo import Repo

    with Repo(str(path)) as repo:
        end = end or repo.head().decode()
        try:
            start_tree = cast(Commit, repo[start.encode()]).tree
            end_tree = cast(Commit, repo[end.encode()]).tree
            changes = tree_changes(repo.object_store, start_tree, end_tree)
            sides = [side for change in changes for side in (change.old, change.new) if side is not None]
        except KeyError as exc:  # raised as the trees are read, too
            raise Invalid(f"the checkout at {path} lacks commit {exc}; fetch it first") from exc
        return end, {side.path.decode() for side in sides if side.path is not None}


def facts(cwd: Path, asked: Questions) -> Checkout:
    """The answers to the gate's questions about the checkout holding `cwd`."""
    files = {path: _exists(cwd, path) for path in asked.files}
    branch, upstream = _branch(cwd) if asked.branch else (None, None)
    return Checkout(files=files, branch=branch, upstream=upstream)


def _exists(cwd: Path, path: str) -> bool:
    target = cwd / Path(path).expanduser()
    return target.exists() or target.is_symlink()


def _branch(cwd: Path) -> tuple[str | None, str | None]:
    """The branch HEAD names and the branch its `branch.<name>.merge` names (None: detached,
    unset, or not a git checkout)."""
    from dulwich.errors import NotGitRepository
    from dulwich.refs import HEADREF
    from dulwich.repo import Repo

    try:
        with Repo.discover(str(cwd)) as repo:
            head = repo.refs.read_ref(HEADREF) or b""
            if not head.startswith(b"ref: refs/heads/"):
                return None, None
            name = head.removeprefix(b"ref: refs/heads/")
            config = repo.get_config_stack()
            try:
                merge: bytes | None = config.get((b"branch", name), b"merge")
            except KeyError:
                merge = None
    except (NotGitRepository, OSError, ValueError):
        return None, None
    upstream = merge.removeprefix(b"refs/heads/").decode() if merge else None
    return name.decode(), upstream
