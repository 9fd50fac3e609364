"""Credentials for http(s) remotes: a token from the environment or from a file outside the store.

- `SELF_TOKEN` (or `SELF_GIT_PASSWORD`), with `SELF_GIT_USERNAME` (default `selfhub`; GitHub,
  GitLab and Gitea accept any user name with a token).
- else the credentials file `SELF_CREDENTIALS`, or `$XDG_CONFIG_HOME/selfhub/credentials`
  (`~/.config/selfhub/credentials`): a JSON object from http(s) URLs to
  `{"username": ..., "token": ...}`. An entry applies to a URL of the same scheme, host and
  port (80 and 443 when none is written) whose path begins with the entry's path segments
  (`https://host/team` covers `https://host/team/ws.git`, not `https://host/team-b/…` nor
  `https://host.evil.example/…`); the entry with the most segments wins. The file must be
  readable by its owner only (mode 0600) and must not lie inside a workspace store.

ssh remotes use the system's ssh and its agent. Nothing here is ever written to the store,
printed or logged; `redact` removes secrets from any text that is about to be shown, and a
remote URL is refused when it carries one (`remotes.normalize`).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from service.adapters.sync.errors import SyncError
from service.core.gates.secret_formats import mask_tokens, word_token_fact

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
            f"the credentials file {path} is not a JSON object of URLs "
            f'({type(exc).__name__}); write {{"https://host/team": {{"username": "u", "token": "…"}}}}'
        ) from None
    if not isinstance(table, dict):
        raise SyncError(f"the credentials file {path} must hold a JSON object of URLs")
    return match(table, url)


_DEFAULT_PORTS = {"http": 80, "https": 443}
Place = tuple[str, str, int, tuple[str, ...]]  # scheme, host, port, path segments


def _place(url: str) -> Place | None:
    """Where an http(s) URL points, ports made explicit; None for anything else."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    segments = tuple(segment for segment in parts.path.split("/") if segment)
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[scheme], segments


def match(table: Mapping[object, object], url: str) -> Credentials | None:
    """The entry of a credentials table for `url`: the same scheme, host and port, and a
    path that is a whole-segment prefix of the URL's; the entry with the most segments wins.
    An entry holding no token is skipped; a key that is not an http(s) URL is an error."""
    target = _place(url)
    best: tuple[int, Credentials] | None = None
    for key, entry in table.items():
        place = _place(key) if isinstance(key, str) else None
        if place is None:
            raise SyncError(
                f"the credentials file has an entry {redact(str(key), [])!r} that is not an http(s) "
                "URL; write https://host[:port][/path]"
            )
        if target is None or place[:3] != target[:3] or target[3][: len(place[3])] != place[3]:
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str) or not entry["token"]:
            continue
        username = entry.get("username") if isinstance(entry.get("username"), str) else DEFAULT_USERNAME
        if best is None or len(place[3]) > best[0]:
            best = (len(place[3]), Credentials(str(username), entry["token"]))
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


# --- what a URL may show -------------------------------------------------------------

SSH_SCHEMES = ("ssh", "git+ssh")
# A user name ssh logs in as (`git`, `deploy-bot`); anything longer or odder reads as a token.
PLAIN_USER = re.compile(r"[A-Za-z_][A-Za-z0-9._-]{0,31}")
# scheme://[userinfo@]authority/path[?query][#fragment] inside any text; the userinfo runs
# to the last @ before the path, so a password holding an @ goes with it.
_URL = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]{0,31})://(?:(?P<userinfo>[^/?#\s]*)@)?"
    r"(?P<rest>[^?#\s'\"<>()]*)(?P<query>\?[^#\s'\"<>()]*)?(?P<fragment>#[^\s'\"<>()]*)?"
)


def plain_user(userinfo: str) -> bool:
    """Whether userinfo is a bare ssh login name (no password, not shaped like a token)."""
    return PLAIN_USER.fullmatch(userinfo) is not None and word_token_fact(userinfo) is None


def redact(text: str, secrets: list[str]) -> str:
    """`text` with every secret, every credential in a URL (user info other than a plain ssh
    user, query strings, fragments) and every known token format replaced by ***."""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    if "://" in text:
        text = _URL.sub(_shown_url, text)
    return mask_tokens(text)


def _shown_url(found: re.Match[str]) -> str:
    scheme, userinfo = found.group("scheme"), found.group("userinfo")
    shown = f"{scheme}://"
    if userinfo is not None:
        keep = scheme.lower() in SSH_SCHEMES and plain_user(userinfo)
        shown += f"{userinfo if keep else '***'}@"
    shown += found.group("rest")
    if found.group("query") is not None:
        shown += "?***"
    if found.group("fragment") is not None:
        shown += "#***"
    return shown


def url_secrets(url: str) -> list[str]:
    """The parts of a URL that may be credentials (a password, a user name other than a plain
    ssh user, the query, the fragment), for `redact` to remove from any text a connection
    to it prints; parts under four characters are left (they would mangle the text)."""
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
    except ValueError:
        return []
    found = [password or "", parts.query, parts.fragment]
    if username and not (parts.scheme.lower() in SSH_SCHEMES and plain_user(username)):
        found.append(username)
    return [part for part in found if len(part) >= 4]
