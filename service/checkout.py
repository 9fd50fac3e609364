"""Read-only facts of the code checkout a coding agent works in, for the action gate: whether
the files a command would overwrite exist, the branch checked out and its upstream (dulwich)."""

from __future__ import annotations

from pathlib import Path

from service.model.destructive import Checkout, Questions


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
