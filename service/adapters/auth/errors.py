"""Errors of users and tokens. Every message says what is wrong and names no front end; a front
end adds what to run next (the CLI: `cli/problems.py`, by the error's `code` and `about`)."""

from __future__ import annotations

from service.core.errors import SelfhubError


class AuthError(SelfhubError):
    """Root of every error the auth adapter raises."""

    code = "store"


class NoSuchUser(AuthError):
    code = "unknown-user"

    def __init__(self, name: str) -> None:
        super().__init__(f"no user {name!r}", name=name)


class UserExists(AuthError):
    def __init__(self, name: str) -> None:
        super().__init__(f"user {name!r} already exists")


class NoSuchToken(AuthError):
    code = "unknown-token"

    def __init__(self, token_id: str) -> None:
        super().__init__(f"no token with id {token_id!r}")


class NotAuthenticated(AuthError):
    """The token presented is unknown, malformed or revoked (one message for all three)."""

    def __init__(self) -> None:
        super().__init__("the token is not valid: it is unknown or revoked; ask an admin for a new one")


class IdentityUnavailable(AuthError):
    """The identity store (PostgreSQL) cannot be reached: nothing is allowed meanwhile."""

    code = "identity-unavailable"
    retry_after_s = 2

    def __init__(self, why: str) -> None:
        super().__init__(
            f"the identity database cannot be reached ({why}); nothing that needs a token is "
            f"answered until it is back: retry in {self.retry_after_s} s"
        )


class IdentityNewer(AuthError):
    """The identity database's schema was written by a later release."""

    code = "format-newer"

    def __init__(self, found: int, read: int) -> None:
        super().__init__(
            f"the identity database is of schema {found}, newer than this release reads ({read}); "
            "run the release that migrated it"
        )
