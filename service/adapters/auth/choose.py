"""Which identity adapter a service or an admin command opens: PostgreSQL at a `postgresql://`
URL (`--identity`, `SELF_IDENTITY`), else SQLite in the data directory."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.adapters.auth.port import Identity
    from service.adapters.data.workspaces import Data


def identity(data: Data | None, url: str | None) -> Identity:
    """The identity at `url`, else in `data` (one of them is given). With both, a token is made
    only for a workspace `data` holds."""
    if url is not None:
        from service.adapters.auth.postgres import PgIdentity

        return PgIdentity(url, data)
    from service.adapters.auth.tokens import Auth

    if data is None:
        raise ValueError("an identity needs a data directory or a URL")
    return Auth(data)
