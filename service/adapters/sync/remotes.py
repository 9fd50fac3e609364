"""Remotes of a store, kept in the store's `.git/config` (plain git sees them too).

A remote is a name and a URL: a path, `file://`, `git://`, `ssh://` or `user@host:path`,
`http(s)://`. URLs are stored without credentials: user info (but a plain ssh user such as
`git@`), a query string or fragment, or a known token format anywhere in a URL is refused
(tokens come from the environment or a credentials file, see `credentials`). A URL already
in `.git/config` from elsewhere is shown redacted (`listed`, `remove`, every error); only
`url_of`, which connects, sees it whole.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse, urlsplit

from dulwich.repo import Repo

from service.adapters.sync.credentials import SSH_SCHEMES, plain_user, redact
from service.adapters.sync.errors import RemoteExists, SyncError, UnknownRemote
from service.core.gates.secret_formats import token_fact

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
SCHEMES = ("file", "git", "ssh", "git+ssh", "http", "https")
SCP_LIKE = re.compile(r"^(?:[^@/:\s]+@)?[^@/:\s]+:(?!//).+$")
DEFAULT = "origin"


def check_name(name: str) -> str:
    if not NAME.match(name) or ".." in name:
        raise SyncError(f"{name!r} is not a remote name: use letters, digits, dots, dashes and underscores")
    return name


def normalize(url: str, cwd: Path | None = None) -> str:
    """The URL as it is stored: local paths made absolute; credentials refused."""
    url = url.strip()
    if not url:
        raise SyncError("give the remote's URL or path")
    check_credentials(url)
    parsed = urlsplit(url)
    if parsed.scheme in SCHEMES:
        if parsed.scheme == "file":
            return url
        if not parsed.hostname:
            raise SyncError(f"{_shown(url)} names no host")
        return url
    if "://" in url:
        raise SyncError(f"{_shown(url)}: unknown scheme {parsed.scheme!r}; use one of {', '.join(SCHEMES)}")
    if SCP_LIKE.match(url) and not Path(url).exists():
        return url  # user@host:path (ssh)
    return str((cwd or Path.cwd()).joinpath(Path(url).expanduser()).resolve())


_NO_CREDENTIALS = (
    "a remote URL is kept in .git/config and printed, so it carries no credential: for "
    "http(s), put the token in SELF_TOKEN (the user name in SELF_GIT_USERNAME) or in the "
    "credentials file (~/.config/selfhub/credentials, see docs/sync.md); ssh "
    "logs in with your keys or agent and its URL may name only a plain user (git@host)"
)


def check_credentials(url: str) -> None:
    """Refuse (SyncError) a URL that carries a credential, without repeating it: user info
    other than a plain ssh user, a query string or fragment, or a known token format."""
    what = _carried(url)
    if what is not None:
        raise SyncError(f"{_shown(url)} holds {what}; {_NO_CREDENTIALS}")


def _carried(url: str) -> str | None:
    token = token_fact(url)
    if token is not None:
        return token.removeprefix("holds ")
    if "://" not in url:
        user, at, _ = url.partition("@")
        scp = at and SCP_LIKE.match(url) and not Path(url).exists()
        return "a user name that is not a plain ssh user" if scp and not plain_user(user) else None
    try:
        parsed = urlsplit(url)
        username, password = parsed.username, parsed.password
    except ValueError:
        return "an address that cannot be read"
    if parsed.query or parsed.fragment or "?" in url or "#" in url:
        return "a query string or fragment"
    if password is not None:
        return "a password or token"
    if username is not None and not (parsed.scheme in SSH_SCHEMES and plain_user(username)):
        return "a user name before @"
    return None


def _shown(url: str) -> str:
    return redact(url, [])


def add(repo: Repo, url: str, name: str = DEFAULT, *, init: bool = False) -> str:
    """Record a remote; returns the stored URL. Refuses a name already in use.

    `init`: the URL is a local path; make an empty bare repository there (branch main) if
    there is nothing yet.
    """
    check_name(name)
    stored = normalize(url)
    if init:
        init_bare(stored)
    config = repo.get_config()
    section = (b"remote", name.encode())
    if config.has_section(section):
        current = _shown(config.get(section, b"url").decode("utf-8", "replace"))
        raise RemoteExists(f"a remote named {name!r} exists already ({current})", name=name)
    config.set(section, b"url", stored.encode("utf-8"))
    config.set(section, b"fetch", f"+refs/heads/main:refs/remotes/{name}/main".encode())
    config.write_to_path()
    return stored


def _configured(repo: Repo) -> list[tuple[str, str]]:
    """Every remote's name and URL as .git/config holds it, sorted by name."""
    config = repo.get_config()
    rows = []
    for section in config.sections():
        if len(section) == 2 and section[0] == b"remote":
            try:
                url = config.get(section, b"url").decode("utf-8", "replace")
            except KeyError:
                continue
            rows.append((section[1].decode("utf-8", "replace"), url))
    return sorted(rows)


def listed(repo: Repo) -> list[dict[str, str]]:
    """Every remote: name and URL (credentials shown as ***), sorted by name."""
    return [{"name": name, "url": _shown(url)} for name, url in _configured(repo)]


def url_of(repo: Repo, name: str) -> str:
    """The URL to connect to, whole: never print it (`listed` shows it redacted)."""
    for known, url in _configured(repo):
        if known == name:
            return url
    names = ", ".join(known for known, _ in _configured(repo)) or "none"
    raise UnknownRemote(f"no remote named {name!r} (known: {names})", name=name)


def remove(repo: Repo, name: str) -> str:
    """Forget a remote and its remote-tracking refs; returns its URL as it may be shown."""
    url = _shown(url_of(repo, name))
    config = repo.get_config()
    del config[(b"remote", name.encode())]
    config.write_to_path()
    prefix = f"refs/remotes/{name}/".encode()
    for ref in list(repo.refs.allkeys()):
        if ref.startswith(prefix):
            repo.refs.remove_if_equals(ref, None)
    return url


def init_bare(url: str) -> Path:
    """An empty bare repository (HEAD on main) at a local path, unless one is there already."""
    if "://" in url and not url.startswith("file://"):
        raise SyncError(
            "{init} makes a repository on a local path only; create remote ones on their server", field="init"
        )
    path = Path(urlparse(url).path if url.startswith("file://") else url)
    if path.exists() and any(path.iterdir()):
        try:
            Repo(str(path)).close()
        except Exception:
            raise SyncError(f"{path} is not empty and not a git repository; pick a new folder") from None
        return path
    path.mkdir(parents=True, exist_ok=True)
    Repo.init_bare(str(path), default_branch=b"main").close()
    return path
