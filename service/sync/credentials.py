"""Credentials for http(s) remotes: a token from the environment or from a file outside the store.

- `SELF_TOKEN` (or `SELF_GIT_PASSWORD`), with `SELF_GIT_USERNAME` (default `selfhub`; GitHub,
  GitLab and Gitea accept any user name with a token).
- else the credentials file `SELF_CREDENTIALS`, or `$XDG_CONFIG_HOME/selfhub/credentials`
  (`~/.config/selfhub/credentials`): a JSON object from URL prefixes to
  `{"username": ..., "token": ...}`; the longest matching prefix wins. The file must be
  readable by its owner only (mode 0600) and must not lie inside a workspace store.

ssh remotes use the system's ssh and its agent. Nothing here is ever written to the store,
printed or logged; `redact` removes secrets from any text that is about to be shown.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from service.sync.errors import SyncError

DEFAULT_USERNAME = "selfhub"
TOKEN_ENV = ("SELF_TOKEN", "SELF_GIT_PASSWORD")
USERNAME_ENV = "SELF_GIT_USERNAME"
FILE_ENV = "SELF_CREDENTIALS"


class Credentials:
    """A user name and a token; the token never appears in repr or str."""

    def __init__(self, username: str, token: str) -> None:
        self.username = username
        self.token = token

    def __repr__(self) -> str:
        return f"Credentials(username={self.username!r}, token=<hidden>)"

    __str__ = __repr__


def credentials_file() -> Path:
    explicit = os.environ.get(FILE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "selfhub" / "credentials"


def lookup(url: str, store_root: Path | None = None) -> Credentials | None:
    """The credentials for an http(s) URL, or None when none are configured."""
    for name in TOKEN_ENV:
        token = os.environ.get(name)
        if token:
            return Credentials(os.environ.get(USERNAME_ENV) or DEFAULT_USERNAME, token)
    path = credentials_file()
    if not path.exists():
        return None
    _check_file(path, store_root)
    try:
        table = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise SyncError(
            f"the credentials file {path} is not a JSON object of URL prefixes "
            f'({type(exc).__name__}); write {{"https://host/team/": {{"username": "u", "token": "…"}}}}'
        ) from None
    if not isinstance(table, dict):
        raise SyncError(f"the credentials file {path} must hold a JSON object of URL prefixes")
    best: tuple[int, Credentials] | None = None
    for prefix, entry in table.items():
        if not isinstance(prefix, str) or not url.startswith(prefix) or not isinstance(entry, dict):
            continue
        token = entry.get("token")
        if not isinstance(token, str) or not token:
            continue
        username = entry.get("username") if isinstance(entry.get("username"), str) else DEFAULT_USERNAME
        if best is None or len(prefix) > best[0]:
            best = (len(prefix), Credentials(str(username), token))
    return None if best is None else best[1]


def _check_file(path: Path, store_root: Path | None) -> None:
    mode = path.stat().st_mode
    if stat.S_IMODE(mode) & 0o077:
        raise SyncError(
            f"the credentials file {path} is readable by others (mode {stat.S_IMODE(mode):o}); "
            f"run `chmod 600 {path}`"
        )
    if store_root is not None:
        resolved, root = path.resolve(), store_root.resolve()
        if resolved == root or root in resolved.parents:
            raise SyncError(
                f"the credentials file {path} lies inside the workspace store; move it out "
                "(e.g. to ~/.config/selfhub/credentials) so it can never be committed"
            )


def redact(text: str, secrets: list[str]) -> str:
    """`text` with every secret (and any user:password@ in URLs) replaced by ***."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return _strip_userinfo(text)


def _strip_userinfo(text: str) -> str:
    import re

    return re.sub(r"(\w+://)[^/@\s]+:[^/@\s]*@", r"\1***@", text)
