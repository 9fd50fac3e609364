"""Errors of sync. Every message says what happened and names no front end (see
`service/adapters/store/errors.py`: a front end adds what to run next); none carries a secret."""

from __future__ import annotations

from service.adapters.store.errors import StoreError


class SyncError(StoreError):
    """Root of every error sync raises. The local store is as it was unless the message says."""

    code = "sync"


class UnknownRemote(SyncError):
    """No remote of that name in the store's git config."""

    code = "unknown-remote"


class Unreachable(SyncError):
    """The remote could not be reached (refused, timed out, no such host or repository)."""

    code = "unreachable"


class AuthFailed(SyncError):
    """The remote refused the credentials (or asked for some and none were given)."""

    code = "auth-failed"


class NotSelfhub(SyncError):
    """The remote holds a git history that is not a selfhub workspace."""

    code = "not-selfhub"


class NoRemote(UnknownRemote):
    """The store has no remote at all."""

    code = "no-remote"


class RemoteExists(SyncError):
    """A remote of that name is there already."""

    code = "remote-exists"


class EmptyRemote(SyncError):
    """The remote has no main branch yet: nothing to clone (a sync publishes to it)."""

    code = "empty-remote"


class KeptMoving(SyncError):
    """Every push of the allowed tries was rejected because others pushed first."""

    code = "kept-moving"


class Declined(SyncError):
    """The server refused the push for a reason of its own (a hook, a protected branch), not
    because others pushed first: trying again would not help."""

    code = "declined"
