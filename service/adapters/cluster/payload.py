"""What goes on the channel: a workspace, the commit it reached, the instance that says so."""

from __future__ import annotations

import msgspec

CHANNEL = "selfhub_changes"
MAX_PAYLOAD = 7000  # PostgreSQL's NOTIFY takes a payload under 8,000 bytes


class Announcement(msgspec.Struct, frozen=True):
    """`workspace` reached `commit` (None: every workspace may have moved, for an instance
    that was cut off and is back); `instance` is the announcing process's id."""

    workspace: str | None
    commit: str | None
    instance: str


def encode(announcement: Announcement) -> str:
    return msgspec.json.encode(announcement).decode()


def decode(payload: str) -> Announcement | None:
    """The announcement in `payload`; None for anything else on the channel."""
    try:
        return msgspec.json.decode(payload.encode(), type=Announcement)
    except msgspec.DecodeError:
        return None


def lock_key(name: str) -> int:
    """The advisory lock's 64-bit key for the background work `name`, the same on every
    instance and release."""
    import hashlib

    digest = hashlib.sha256(f"selfhub:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
