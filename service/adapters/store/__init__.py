"""The workspace store on disk and in git: segments, the append gate, commits, `.local/`."""

from service.adapters.store.errors import (
    AlreadyAStore,
    CorruptFile,
    NotAStore,
    RefMoved,
    StoreError,
    StoreLocked,
)
from service.adapters.store.local import Local, PidRecord, find_marker, liveness, write_marker
from service.adapters.store.segments import Log, Quarantine
from service.adapters.store.store import Store, Transaction

__all__ = [
    "AlreadyAStore",
    "CorruptFile",
    "Local",
    "Log",
    "NotAStore",
    "PidRecord",
    "Quarantine",
    "RefMoved",
    "Store",
    "StoreError",
    "StoreLocked",
    "Transaction",
    "find_marker",
    "liveness",
    "write_marker",
]
