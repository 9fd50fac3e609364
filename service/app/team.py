"""A team service's data directory as `self admin` works on it: its workspaces, users and API
tokens. The data and auth adapters load only when one of these runs. Users and tokens live in
the identity the service uses: the PostgreSQL database at `identity` (a `postgresql://` URL)
when one is given, else DATA/auth.sqlite."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from service.adapters.auth.port import Identity
    from service.adapters.auth.port import NewToken as NewToken
    from service.adapters.auth.port import TokenRow as TokenRow
    from service.adapters.data.backends import Backend
    from service.adapters.data.workspaces import Data


def _data(directory: str, *, making: bool = False) -> Data:
    """The data directory at `directory`: one made already (NotADataDir for a missing folder,
    or one holding other things) unless `making` it (adding a workspace)."""
    from service.adapters.data.workspaces import Data

    data = Data(Path(directory))
    return data if making else data.check()


def _identity(directory: str | None, identity: str | None) -> Identity:
    """The identity at the URL `identity`, else DATA's; with both, a token is made only for a
    workspace DATA holds."""
    from service.adapters.auth.choose import identity as chosen

    if identity is not None:
        return chosen(_data(directory) if directory else None, _identity_url(identity))
    if directory is None:
        from service.core.errors import Invalid

        raise Invalid(
            "users and tokens live in a data directory or an identity database: give {data} or {identity}",
            field=("data", "identity"),
        )
    return chosen(_data(directory).claim(), None)


def _identity_url(url: str) -> str:
    if not url.startswith(("postgresql://", "postgres://")):
        from service.core.errors import Invalid

        raise Invalid("{identity} takes a postgresql://USER@HOST:PORT/DATABASE URL", field="identity")
    return url


def serving(directory: str) -> Path:
    """The data directory a service is to run on: made (`_data`), writable for this user
    (the service writes its workspaces and databases there) and of this release's format
    (`adapters/data/formats.py`); its path."""
    data = _data(directory)
    data.check_writable()
    return of_this_format(data.root)


def of_this_format(root: Path) -> Path:
    """The data directory at `root`, stamped with this release's format when nothing made it
    yet; FormatNewer or FormatOlder (to upgrade first) when it is of another."""
    from service.adapters.data import formats
    from service.adapters.data.workspaces import Data

    data = Data(root).claim()
    formats.check(data.root)
    return data.root


class WorkspaceCreated(msgspec.Struct, frozen=True, omit_defaults=True):
    workspace: str
    path: str
    remote: str | None = None  # a remote-backed workspace's backend (no credential in it)
    head: str | None = None  # its main, as cloned or published
    events: int | None = None  # the events the clone brought
    webhook: str | None = None  # the path the git host posts its push deliveries to
    poll_s: float | None = None


def remote_url(url: str, base: Path | None = None) -> str:
    """A backend's URL as its record keeps it (a relative path taken from `base`, else the
    working directory); a ValueError saying why not, never repeating a credential in it (the
    message says where the token goes)."""
    from service.adapters.sync import SyncError, remotes

    try:
        return remotes.normalize(url, base)
    except SyncError as exc:
        raise ValueError(str(exc)) from None


def add_workspace(
    directory: str,
    name: str,
    remote: str | None = None,
    secret_env: str | None = None,
    poll_s: float | None = None,
) -> WorkspaceCreated:
    """Create workspace `name` in DATA/workspaces/NAME: a new store, or with `remote` a mirror
    of that git remote (cloned now; a new store published there when it is empty) that the
    service keeps in step on a webhook (signed with the secret in the variable `secret_env`),
    every `poll_s` seconds and after every write."""
    data = _data(directory, making=True)
    if remote is None:
        if secret_env is not None or poll_s is not None:
            from service.core.errors import Invalid

            raise Invalid(
                "a webhook secret and a poll period are settings of a workspace that mirrors a "
                "remote: give {remote}, its URL, too",
                field="remote",
            )
        return WorkspaceCreated(name, str(data.add(name).root))
    from service.adapters.data.backends import DEFAULT_POLL_S, Backend, check_env_name, check_poll
    from service.adapters.data.errors import WorkspaceExists
    from service.adapters.sync import Options, remotes
    from service.adapters.sync.credentials import redact
    from service.app.establish import establish

    url = remotes.normalize(remote)  # a credential in it is refused, saying where they go
    backend = Backend(
        url,
        check_env_name(secret_env) if secret_env is not None else None,
        check_poll(poll_s if poll_s is not None else DEFAULT_POLL_S),
    )
    if data.path(name).exists() or data.backends.get(name) is not None:
        raise WorkspaceExists(name)
    data.check_writable()
    data.claim()
    summary = establish(data, name, backend, Options())
    data.backends.put(name, backend)
    data.mark()
    hook = f"/hooks/{name}" if backend.secret_env is not None else None
    return WorkspaceCreated(
        name, str(data.path(name)), redact(url, []), summary.head, summary.pulled, hook, backend.poll_s
    )


def declared_backend(
    data: Data, name: str, url: str, secret_env: str | None, poll_s: float
) -> Backend | None:
    """Workspace `name` mirrors `url`, as `self serve --config`'s `[remotes.NAME]` says: the
    backend record to write in DATA (when it has no such workspace, the service clones it as
    it starts; when it mirrors that URL already, its webhook variable and poll period as
    configured), None when DATA's record says that already. A ValueError when DATA holds
    `name` otherwise: hosted by the service, or a mirror of another URL (a store does not move
    to another remote by a setting)."""
    from service.adapters.data.backends import Backend, check_poll
    from service.adapters.sync.credentials import redact

    backend = Backend(url, secret_env, check_poll(poll_s))
    held = data.backends.get(name)
    if held is None and data.path(name).exists():
        raise ValueError(
            f"workspace {name} is in {data.root} already, hosted by the service; a hosted "
            "workspace does not become a mirror by configuration: take it out of [remotes], or "
            "name another workspace"
        )
    if held is not None and held.url != url:
        raise ValueError(
            f"workspace {name} in {data.root} mirrors {redact(held.url, [])}, not this URL; a "
            "mirror does not move to another remote by configuration: give its URL, or name "
            "another workspace"
        )
    return None if held == backend else backend


def created_text(made: WorkspaceCreated) -> str:
    """What `self admin workspace add` prints."""
    line = f"created workspace {made.workspace} in {made.path}"
    if made.remote is None:
        return line
    line += f", a mirror of {made.remote} ({made.events or 0} events, main at {(made.head or '')[:12]})"
    poll = f"every {made.poll_s:g} s" if made.poll_s else "no polling"
    line += f"\nthe service syncs it on a push webhook, after each write and {poll}"
    if made.webhook is not None:
        line += f"\nwebhook: POST https://SERVICE{made.webhook} (content type application/json)"
    return line


def workspaces(directory: str) -> list[str]:
    return _data(directory).names()


def add_user(directory: str | None, name: str, identity: str | None = None) -> None:
    with closing(_identity(directory, identity)) as found:
        found.add_user(name)


def users(directory: str | None, identity: str | None = None) -> list[str]:
    with closing(_identity(directory, identity)) as found:
        return found.users()


def create_token(
    directory: str | None, user: str, workspace: str, role: str, identity: str | None = None
) -> NewToken:
    """A new token for `user` on the one `workspace` it opens; its secret is shown this once."""
    with closing(_identity(directory, identity)) as found:
        return found.create_token(user, workspace, role)


def revoke_token(directory: str | None, token_id: str, identity: str | None = None) -> TokenRow:
    with closing(_identity(directory, identity)) as found:
        return found.revoke(token_id)


def tokens(directory: str | None, workspace: str | None, identity: str | None = None) -> list[TokenRow]:
    with closing(_identity(directory, identity)) as found:
        return found.tokens(workspace)
