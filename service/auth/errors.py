"""Errors of users and tokens. Every message says what to do next."""

from __future__ import annotations


class AuthError(Exception):
    """Root of every error the auth adapter raises."""


class NoSuchUser(AuthError):
    def __init__(self, name: str) -> None:
        super().__init__(f"no user {name!r}; `self admin user add {name} --data DIR` adds one")


class UserExists(AuthError):
    def __init__(self, name: str) -> None:
        super().__init__(f"user {name!r} already exists")


class NoSuchToken(AuthError):
    def __init__(self, token_id: str) -> None:
        super().__init__(f"no token with id {token_id!r}; `self admin token list --data DIR` shows the ids")


class NotAuthenticated(AuthError):
    """The token presented is unknown, malformed or revoked (one message for all three)."""

    def __init__(self) -> None:
        super().__init__("the token is not valid: it is unknown or revoked; ask an admin for a new one")
