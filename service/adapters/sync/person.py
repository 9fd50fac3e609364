"""What this machine knows of the person at it, outside every store: the name `self config
user NAME` keeps (`$XDG_CONFIG_HOME/selfhub/user.json`, `~/.config/selfhub/user.json`, beside
the credentials file; per person, so never in a store's synced `workspace.json`), git's
`user.name` (the store's git config, then the person's and the system's).
The operating system's login name is never read."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from service.adapters.sync.errors import SyncError

if TYPE_CHECKING:
    from dulwich.repo import Repo

USER_FILE = "user.json"


def config_dir() -> Path:
    """`$XDG_CONFIG_HOME/selfhub`, else `~/.config/selfhub`."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "selfhub"


def configured_user() -> str | None:
    """The name `self config user` kept, or None."""
    path = config_dir() / USER_FILE
    try:
        held = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise SyncError(
            f"{path} is not a JSON object with a user name ({type(exc).__name__}); "
            "remove the file and set the name again"
        ) from None
    name = held.get("user") if isinstance(held, dict) else None
    return name if isinstance(name, str) and name else None


def keep_user(name: str | None) -> Path:
    """Keep `name` as the user name (None: forget it); the file's path."""
    path = config_dir() / USER_FILE
    if name is None:
        path.unlink(missing_ok=True)
        return path
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fresh = path.with_name(f".{USER_FILE}.{os.getpid()}.new")
    fresh.write_text(json.dumps({"user": name}) + "\n", "utf-8")
    os.replace(fresh, path)
    return path


def git_user_name(repo: Repo) -> str | None:
    """git's `user.name` as a commit in `repo` would read it (its config, the person's, the
    system's); None when none is set. dulwich reads the files only: no login name is guessed."""
    try:
        name = repo.get_config_stack().get((b"user",), b"name").decode("utf-8", "replace").strip()
    except KeyError:
        return None
    return name or None
