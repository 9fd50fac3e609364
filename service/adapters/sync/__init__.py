"""Sync through any git remote with dulwich: fetch, append the local-only events, push with
compare-and-swap, retry; clone; remotes in the store's git config."""

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
