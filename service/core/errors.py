"""The one error root of selfhub (`SelfhubError`), the model's errors and their two families.

Every error selfhub raises on purpose is a `SelfhubError`: the model's here, each adapter's and
front end's through its package's root (`StoreError`, `SyncError`, `DataError`, `AuthError`,
`SearchIndexError`, `LiveError`, `EndpointError`, `ApiError`, `WebError`), defined in the model
because every layer may import it (`tests/unit/test_one_error_root.py` checks). Warnings are
not errors: they stay `Warning`s.

`Invalid` is bad input; `Refused` is a rule saying no. Each carries a stable `code`
(`service.core.problems.CODES` maps it to the CLI's exit code and to an HTTP status), the
command fields it concerns, and a message that names no front end: a field appears in it as
`{field}`, which each front end renders its own way (the CLI as its flag, `str()` as the
field's name). Hints that name a front end's commands are the front end's to add.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def plain(field: str) -> str:
    return field


def fill(template: str, fields: tuple[str, ...], name: Callable[[str], str] = plain) -> str:
    """`template` with each `{field}` of `fields` rendered by `name` (others left as written)."""
    return _PLACEHOLDER.sub(lambda m: name(m[1]) if m[1] in fields else m[0], template)


def slot(field: str) -> str:
    """Where a field appears in a message (`{field}`), for messages that name it by variable."""
    return "{" + field + "}"


class SelfhubError(Exception):
    """Root of every error selfhub raises. `code` is its row in `service.core.problems.CODES`
    (the CLI's exit code, the HTTP status of its problem document); a family's root sets its
    default, a class its own. An error without a code of its own answers as unexpected.
    `about` holds what a front end's hint may name (a record's id, a remote's name, …)."""

    code: str = "server"

    def __init__(self, message: str = "", **about: str) -> None:
        self.about = about
        super().__init__(message)


class ModelError(SelfhubError):
    """Root of every error the pure core raises."""

    default_code = "invalid-value"

    def __init__(
        self, message: str, *, code: str | None = None, field: str | tuple[str, ...] = (), **about: str
    ) -> None:
        self.template = message
        self.code = code or self.default_code
        self.fields: tuple[str, ...] = (field,) if isinstance(field, str) else tuple(field)
        super().__init__(self.detail(), **about)

    @property
    def field(self) -> str | None:
        """The command field the error concerns first (None: the command as a whole)."""
        return self.fields[0] if self.fields else None

    def detail(self, name: Callable[[str], str] = plain) -> str:
        """The message with each of its fields rendered by `name` (the CLI passes its flags)."""
        return fill(self.template, self.fields, name)


class Invalid(ModelError):
    """The input cannot be understood; the message says what to do instead."""


class Refused(ModelError):
    """The input is understood but a rule refuses it (cap, sanitize, evidence)."""

    default_code = "refused"
