"""Credentials for http(s) remotes: a token from the environment or from a file outside the store.

- `SELF_TOKEN` (or `SELF_GIT_PASSWORD`), with `SELF_GIT_USERNAME` (default `selfhub`; GitHub,
  GitLab and Gitea accept any user name with a token). Each secret may come from a file
  instead, as container secrets are mounted: `SELF_TOKEN_FILE` (`from_env`).
- else the credentials file `SELF_CREDENTIALS`, or `$XDG_CONFIG_HOME/selfhub/credentials`
  (`~/.config/selfhub/credentials`): a JSON object from http(s) URLs to
  `{"username": ..., "token": ...}`; `self login` writes an entry for a team service with
  the `user`, `workspace` and `role` the service told it (`Login`). An entry applies to a URL
  of the same scheme, host and port (80 and 443 when none is written) whose path begins with
  the entry's path segments (`https://host/team` covers `https://host/team/ws.git`, not
  `https://host/team-b/…` nor `https://host.evil.example/…`); the entry with the most
  segments wins. The file must be readable by its owner only (mode 0600) and must not lie
  inside a workspace store; it is written whole to a new file that replaces it.

ssh remotes use the system's ssh and its agent. Nothing here is ever written to the store,
printed or logged; `redact` removes secrets from any text that is about to be shown, and a
remote URL is refused when it carries one (`remotes.normalize`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

from service.adapters.sync.errors import SyncError
from service.core.gates.secret_formats import mask_tokens, word_token_fact

DEFAULT_USERNAME = "selfhub"
TOKEN_ENV = ("SELF_TOKEN", "SELF_GIT_PASSWORD")
USERNAME_ENV = "SELF_GIT_USERNAME"
FILE_ENV = "SELF_CREDENTIALS"
FROM_FILE = "_FILE"  # NAME_FILE: the file that holds the secret NAME would


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
    from service.adapters.sync.person import config_dir

    return config_dir() / "credentials"


def from_env(name: str) -> str | None:
    """The secret in the variable `name`, else in the file `name_FILE` names (one trailing
    newline dropped), else None; SyncError when that file cannot be read."""
    value = os.environ.get(name)
    if value:
        return value
    path = os.environ.get(name + FROM_FILE)
    if not path:
        return None
    try:
        text = Path(path).expanduser().read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or type(exc).__name__
        raise SyncError(
            f"{name}{FROM_FILE}={path} cannot be read ({why}); point it at a readable file holding the secret"
        ) from None
    secret = text.removesuffix("\n").removesuffix("\r")
    return secret or None


def lookup(url: str, store_root: Path | None = None) -> Credentials | None:
    """The credentials for an http(s) URL, or None when none are configured."""
    for name in TOKEN_ENV:
        token = from_env(name)
        if token:
            return Credentials(os.environ.get(USERNAME_ENV) or DEFAULT_USERNAME, token)
    table = read_table(store_root)
    return match(table, url) if table else None


def read_table(store_root: Path | None = None) -> dict[str, object]:
    """The credentials file's table (empty when there is no file), once its mode and place pass."""
    path = credentials_file()
    if not path.exists():
        return {}
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
    return table


def write_table(table: Mapping[str, object]) -> Path:
    """`table` as the credentials file: a new file of mode 0600 (its folder made 0700) that
    replaces the old one at once, so a reader never sees half of it."""
    path = credentials_file()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fresh = path.with_name(f".{path.name}.{os.getpid()}.new")
    with contextlib.suppress(FileNotFoundError):
        fresh.unlink()
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(table, indent=2, sort_keys=True) + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(fresh, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            fresh.unlink()
        raise
    return path


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


def match(table: Mapping[Any, object], url: str) -> Credentials | None:
    """The entry of a credentials table for `url`: the same scheme, host and port, and a
    path that is a whole-segment prefix of the URL's; the entry with the most segments wins.
    An entry holding no token is skipped; a key that is not an http(s) URL is an error."""
    found = _best(table, url)
    if found is None:
        return None
    username = found[1].get("username")
    return Credentials(username if isinstance(username, str) else DEFAULT_USERNAME, str(found[1]["token"]))


def _best(table: Mapping[Any, object], url: str) -> tuple[str, dict[str, object]] | None:
    """The key and entry `match` picks for `url`."""
    target = _place(url)
    best: tuple[int, str, dict[str, object]] | None = None
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
        if best is None or len(place[3]) > best[0]:
            best = (len(place[3]), str(key), entry)
    return None if best is None else best[1:]


# --- logins to a team service (`self login`) ------------------------------------------


class Login(msgspec.Struct, frozen=True):
    """Who a token is on a team service, as the service told `self login`."""

    service: str
    user: str
    workspace: str
    role: str


_LOGIN_KEYS = ("user", "workspace", "role")


def _login(key: str, entry: object) -> Login | None:
    if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in _LOGIN_KEYS):
        return None
    return Login(key, entry["user"], entry["workspace"], entry["role"])


def logins(store_root: Path | None = None) -> list[Login]:
    """Every login the credentials file holds, by service URL."""
    return sorted(
        (found for key, entry in read_table(store_root).items() if (found := _login(key, entry))),
        key=lambda login: login.service,
    )


def login_for(url: str, store_root: Path | None = None) -> Login | None:
    """The login whose entry `lookup` would use for `url` (None: none, or not a login's)."""
    found = _best(read_table(store_root), url)
    return None if found is None else _login(*found)


def save_login(login: Login, token: str) -> Path:
    """Keep `token` for `login.service` with who it is; an entry for that URL is replaced."""
    table = read_table()
    entry = {"username": DEFAULT_USERNAME, "token": token} | msgspec.structs.asdict(login)
    del entry["service"]
    table[login.service] = entry
    return write_table(table)


def forget(service: str) -> bool:
    """Remove the entry of `service` (as `self login` wrote it); False when there was none."""
    table = read_table()
    if table.pop(service, None) is None:
        return False
    write_table(table)
    return True


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
