"""Remotes of a store, kept in the store's `.git/config` (plain git sees them too).

A remote is a name and a URL: a path, `file://`, `git://`, `ssh://` or `user@host:path`,
`http(s)://`. URLs are stored without credentials: a password or token in a URL is
refused (tokens come from the environment or a credentials file, see `credentials`).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

from dulwich.repo import Repo

from service.sync.errors import SyncError, UnknownRemote

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
    parsed = urlparse(url)
    if parsed.scheme in SCHEMES:
        if parsed.password is not None:
            raise SyncError(
                "the URL holds a password or token; remove it from the URL and put the token in "
                "SELF_TOKEN or the credentials file (see README, Sync with your team)"
            )
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


def _shown(url: str) -> str:
    from service.sync.credentials import redact

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
        current = config.get(section, b"url").decode("utf-8", "replace")
        raise SyncError(
            f"a remote named {name!r} exists already ({current}); "
            f"`self remote remove {name}` first, or pick another --name"
        )
    config.set(section, b"url", stored.encode("utf-8"))
    config.set(section, b"fetch", f"+refs/heads/main:refs/remotes/{name}/main".encode())
    config.write_to_path()
    return stored


def listed(repo: Repo) -> list[dict[str, str]]:
    """Every remote: name and URL, sorted by name."""
    config = repo.get_config()
    rows = []
    for section in config.sections():
        if len(section) == 2 and section[0] == b"remote":
            try:
                url = config.get(section, b"url").decode("utf-8", "replace")
            except KeyError:
                continue
            rows.append({"name": section[1].decode("utf-8", "replace"), "url": url})
    return sorted(rows, key=lambda r: r["name"])


def url_of(repo: Repo, name: str) -> str:
    for row in listed(repo):
        if row["name"] == name:
            return row["url"]
    known = ", ".join(r["name"] for r in listed(repo)) or "none"
    raise UnknownRemote(
        f"no remote named {name!r} (known: {known}); add one with `self remote add URL --name {name}`"
    )


def remove(repo: Repo, name: str) -> str:
    """Forget a remote and its remote-tracking refs; returns its URL."""
    url = url_of(repo, name)
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
        raise SyncError("--init makes a repository on a local path only; create remote ones on their server")
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
