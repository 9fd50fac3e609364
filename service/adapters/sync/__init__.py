"""Sync through any git remote with dulwich: fetch, append the local-only events, push with
compare-and-swap, retry; clone; remotes in the store's git config.

The names below are imported on first use (PEP 562): a process that only reads a small module
of this package (the credentials file, a person's name, the remotes' list) does not pay for
the protocol's modules and dulwich's client.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.adapters.sync.clone import clone
    from service.adapters.sync.engine import Options, Summary, sync
    from service.adapters.sync.errors import (
        AuthFailed,
        Declined,
        KeptMoving,
        NotSelfhub,
        SyncError,
        UnknownRemote,
        Unreachable,
    )
    from service.adapters.sync.remembered import last_synced

_WHERE = {
    "clone": "clone",
    "Options": "engine",
    "Summary": "engine",
    "sync": "engine",
    "AuthFailed": "errors",
    "Declined": "errors",
    "KeptMoving": "errors",
    "NotSelfhub": "errors",
    "SyncError": "errors",
    "UnknownRemote": "errors",
    "Unreachable": "errors",
    "last_synced": "remembered",
}

__all__ = [
    "AuthFailed",
    "Declined",
    "KeptMoving",
    "NotSelfhub",
    "Options",
    "Summary",
    "SyncError",
    "UnknownRemote",
    "Unreachable",
    "clone",
    "last_synced",
    "sync",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
