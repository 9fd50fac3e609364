"""Logging in to a team service once (`self login`, `self whoami`, `self logout`) and who signs
the CLI's writes (`author`).

`login` asks the service who the token is (`GET /api/v1/whoami`) and keeps the token with the
answer in the credentials file under the service's URL (`adapters/sync/credentials.py`), so
every command that reaches that service (clone, sync, the agent's `--service` reads, `self
mcp --service`) finds it without SELF_TOKEN. A write's author is SELF_USER, else the user
logged in to a service the store syncs with, else `self config user NAME`, else git's
`user.name`; the operating system's login name never."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import msgspec

from service.adapters.sync.credentials import Login as Login  # what login, whoami, logout answer
from service.core.errors import Invalid

if TYPE_CHECKING:
    from service.adapters.store import Store

TIMEOUT_S = 10.0
AUTHOR_CHARS = 64
# Where a URL on a service stops being the service's own: a workspace's git URL, /mcp, the API.
_ON_SERVICE = ("/git/", "/mcp", "/api/", "/hooks/")


class Who(msgspec.Struct, frozen=True):
    """`GET /api/v1/whoami`'s answer."""

    user: str
    workspace: str
    role: str


def service_url(given: str) -> str:
    """The service's base URL from its base or any URL on it (`…/git/WS.git`, `…/mcp`), without
    a trailing slash; Invalid for anything but an http(s) URL without credentials."""
    from service.adapters.sync.remotes import check_credentials

    text = given.strip()
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise Invalid(
            f"{text!r} is not a service URL: give http(s)://HOST[:PORT], e.g. http://127.0.0.1:8080",
            field="url",
        )
    check_credentials(text)
    path = parts.path
    for marker in _ON_SERVICE:
        path = path.split(marker, 1)[0]
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path.rstrip("/"), "", ""))


def login(given: str, token: str) -> Login:
    """Keep `token` for the service at `given` once the service says who it is."""
    from service.adapters.sync import credentials

    base = service_url(given)
    token = token.strip()
    if not token:
        raise Invalid(
            "no token given",
            code="missing-value",
            field="token",
        )
    who = ask(base, token)
    found = Login(base, who.user, who.workspace, who.role)
    credentials.save_login(found, token)
    return found


def ask(base: str, token: str) -> Who:
    """Who `token` is on the service at `base`."""
    import httpx

    from service.adapters.sync.errors import AuthFailed, Unreachable

    try:
        answer = httpx.get(
            f"{base}/api/v1/whoami", headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT_S
        )
    except httpx.HTTPError as exc:
        raise Unreachable(
            f"the service at {base} did not answer ({type(exc).__name__}); check the URL and that it runs"
        ) from None
    if answer.status_code == 401:
        raise AuthFailed(
            f"the service at {base} does not know that token (401): check it, or ask the service's "
            "admin for a new one"
        )
    if answer.status_code != 200:
        raise Unreachable(f"the service at {base} answered HTTP {answer.status_code}: is it selfhub's?")
    try:
        return msgspec.json.decode(answer.content, type=Who)
    except msgspec.DecodeError:
        raise Unreachable(f"the service at {base} answered no user: is it a selfhub service?") from None


def whoami(given: str | None) -> list[Login]:
    """The logins kept: the one for the service at `given`, else every one; Invalid when none."""
    from service.adapters.sync import credentials

    if given is None:
        found = credentials.logins()
    else:
        service_url(given)  # checked: an http(s) URL without credentials
        one = credentials.login_for(given)
        found = [one] if one is not None else []
    if not found:
        where = f" to {service_url(given)}" if given else ""
        raise Invalid(f"not logged in{where}", code="not-found", field="login")
    return found


def logout(given: str | None) -> Login:
    """Forget the login to the service at `given` (the only one when not given) and its token."""
    from service.adapters.sync import credentials

    held = credentials.logins()
    if given is not None:
        base = service_url(given)
        held = [login for login in held if login.service == base]
        if not held:
            raise Invalid(f"not logged in to {base}", code="not-found", field="login")
    elif len(held) != 1:
        if not held:
            raise Invalid("not logged in to any service", code="not-found", field="login")
        services = ", ".join(login.service for login in held)
        raise Invalid(f"logged in to several services ({services}): name the one to leave", field="url")
    credentials.forget(held[0].service)
    return held[0]


# --- who signs a write -----------------------------------------------------------------


def author(store: Store) -> str | None:
    """Who signs a write to `store` when SELF_USER does not say (module docstring's order)."""
    from service.adapters.sync import credentials, person, remotes

    for url in (row["url"] for row in remotes.listed(store.repo)):
        found = credentials.login_for(url, store.root)
        if found is not None:
            return found.user
    configured = person.configured_user()
    if configured is not None:
        return configured
    named = person.git_user_name(store.repo)
    if named is None:
        return None
    try:
        return valid_author(named)
    except Invalid as exc:
        raise Invalid(
            f"git's user.name cannot sign a write ({exc.detail()}); set a name this machine's writes carry",
            field="user",
        ) from None


def valid_author(name: str) -> str:
    """`name` when it can sign events: a handle of at most AUTHOR_CHARS characters that the
    sanitize gate passes (no email, path or secret); else Invalid saying why."""
    from service.core.gates.sanitize import Unsanitary, check

    name = name.strip()
    if not name or len(name) > AUTHOR_CHARS:
        raise Invalid(f"a user name has 1 to {AUTHOR_CHARS} characters", field="user")
    try:
        check(name, "origin.by")  # what the append gate asks of a signed event
    except Unsanitary as exc:
        kinds = "; ".join(kind for _, kind in exc.findings)
        raise Invalid(f"the name {kinds}: a user name is a handle such as `ada`", field="user") from None
    return name


def configure_user(name: str | None) -> str | None:
    """`self config user [NAME]`: keep `name` (checked) and answer it; without one, the name kept."""
    from service.adapters.sync import person

    if name is None:
        return person.configured_user()
    person.keep_user(valid_author(name))
    return name.strip()


def forget_user() -> None:
    """`self config user --unset`."""
    from service.adapters.sync import person

    person.keep_user(None)
