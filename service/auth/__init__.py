"""Users and API tokens of a team service, in `DATA/auth.sqlite`."""

from service.auth.errors import AuthError, NoSuchToken, NoSuchUser, NotAuthenticated, UserExists
from service.auth.tokens import Auth, Grant, NewToken, TokenRow

__all__ = [
    "Auth",
    "AuthError",
    "Grant",
    "NewToken",
    "NoSuchToken",
    "NoSuchUser",
    "NotAuthenticated",
    "TokenRow",
    "UserExists",
]
