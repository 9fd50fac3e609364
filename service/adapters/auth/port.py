"""The identity port: users, API tokens (their digests), web sessions and revocations, behind one
`Identity` with two adapters: SQLite in the data directory (`tokens.Auth`, the embedded default)
and PostgreSQL (`postgres.PgIdentity`, shared by several instances of the service). Both pass the
same contract (`tests/integration/test_identity_contract.py`).

Every check reads the store: no adapter keeps a grant, so a revoke made anywhere is refused
everywhere at once. An adapter is safe to call from several threads.

A token is `shb_` and 43 base-62 characters: 256 random bits. Only its SHA-256 is stored. A slow
password hash (bcrypt, scrypt, argon2) is for secrets a person picks, which can be guessed; a
256-bit random token cannot, so one fast hash is as strong and keeps every request's check
cheap. The token is shown once, when it is created, and never again.

A web session (`open_session`) is what the web view's cookie holds instead of the token: a
random id of 256 bits, stored as its SHA-256 with its expiry and the id of the token it was
opened with. It is valid while it has not expired, was not ended, and its token is valid and
unrevoked; revoking a token deletes its sessions. A session id is no token: `authenticate`
refuses it, so a stolen cookie opens no API.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Protocol

import msgspec

from service.core.commands.team import Role

PREFIX = "shb_"  # also in service/core/gates/secret_formats.py, so the sanitize gate refuses one
SESSION_PREFIX = "shs_"  # a web session's id: never accepted where a token is
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
BODY = 43  # base-62 digits that hold 256 bits
SHOWN = len(PREFIX) + 4  # the characters of a token that lists show, to recognise it by
USED_EVERY = 16  # last_used is rewritten when its minute changes (the first 16 characters)


class NewToken(msgspec.Struct, frozen=True):
    """A token just created: the one time its secret is in hand."""

    id: str
    token: str
    user: str
    workspace: str
    role: str


class TokenRow(msgspec.Struct, frozen=True):
    """A token as lists show it: never the token itself."""

    id: str
    prefix: str
    user: str
    workspace: str
    role: str
    created: str
    last_used: str | None
    revoked: str | None


class Grant(msgspec.Struct, frozen=True):
    """What a valid token lets its bearer do."""

    token_id: str
    user: str
    workspace: str
    role: Role


class Identity(Protocol):
    """Users, tokens and web sessions. Errors: `errors.NoSuchUser`, `UserExists`, `NoSuchToken`,
    `NotAuthenticated` (one for a malformed, unknown or revoked credential), and
    `IdentityUnavailable` when the store cannot be reached (never an allow)."""

    def add_user(self, name: str) -> None: ...

    def users(self) -> list[str]: ...

    def create_token(self, user: str, workspace: str, role: str) -> NewToken:
        """A new token for `user` on `workspace` with `role`; its secret is in the answer only."""
        ...

    def revoke(self, token_id: str) -> TokenRow:
        """Revoke a token from now on and end its sessions; revoking one twice keeps the first time."""
        ...

    def tokens(self, workspace: str | None = None) -> list[TokenRow]:
        """Every token (of `workspace`), oldest first, without its secret."""
        ...

    def authenticate(self, token: str) -> Grant:
        """What `token` grants; NotAuthenticated when it is malformed, unknown or revoked."""
        ...

    def open_session(self, token: str, lifetime_s: int) -> tuple[str, Grant]:
        """A new session of `token` (checked as `authenticate` checks it) that ends after
        `lifetime_s`: its id, the one time it is in hand, and the token's grant."""
        ...

    def session(self, session: str) -> Grant:
        """The grant of the token `session` was opened with; NotAuthenticated when the session
        is malformed, unknown, ended or expired, or its token revoked."""
        ...

    def end_session(self, session: str) -> None:
        """End `session` (nothing when there is no such session)."""
        ...

    def close(self) -> None: ...


def new_secret(prefix: str = PREFIX) -> str:
    number = int.from_bytes(secrets.token_bytes(32), "big")
    digits = []
    for _ in range(BODY):
        number, digit = divmod(number, 62)
        digits.append(_ALPHABET[digit])
    return prefix + "".join(digits)


def new_token_id() -> str:
    return f"tk{secrets.token_hex(6)}"


def well_formed(secret: str, prefix: str) -> bool:
    return secret.startswith(prefix) and len(secret) == len(prefix) + BODY


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
