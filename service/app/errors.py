"""What an HTTP front end answers for an error the application raised."""

from __future__ import annotations

from collections.abc import Callable

from service.core.errors import ModelError
from service.core.problems import document


def problem(exc: BaseException) -> dict[str, object] | None:
    """The RFC 9457 problem document of `exc` (its status from the code's row, its fields by
    name), or None for an error the application does not raise on purpose (a bug: answer 500).
    A front end's own errors (the service's live workspaces, its routes) it answers itself."""
    from service.adapters.store.errors import StoreError  # sync's errors are store errors too

    if isinstance(exc, ModelError):
        return document(exc.code, exc.detail(), exc.field)
    if isinstance(exc, StoreError):
        return document(exc.code, str(exc))
    return None


def adapter_detail(exc: BaseException, name: Callable[[str], str]) -> str:
    """An adapter error's message with each of its slots rendered by `name`."""
    from service.adapters.store.errors import StoreError

    return exc.detail(name) if isinstance(exc, StoreError) else str(exc)


def adapter_code(exc: BaseException) -> str | None:
    """The problem code of an adapter's error (the store's, the data directory's, the auth
    adapter's), else None; imports no adapter beyond its errors module."""
    from service.adapters.auth.errors import AuthError
    from service.adapters.data.errors import DataError
    from service.adapters.store.errors import StoreError

    if isinstance(exc, StoreError | DataError | AuthError):
        return exc.code
    return None
