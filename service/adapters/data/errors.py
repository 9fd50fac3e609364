"""Errors of the data directory. Every message says what is wrong and names no front end; a
front end adds what to run next (the CLI: `cli/problems.py`, by the error's `code` and `about`)."""

from __future__ import annotations

from service.core.errors import SelfhubError


class DataError(SelfhubError):
    """Root of every error the data directory raises."""

    code = "store"


class NoSuchWorkspace(DataError):
    code = "unknown-workspace"

    def __init__(self, name: str, known: list[str]) -> None:
        listed = ", ".join(known) or "none yet"
        super().__init__(f"no workspace {name!r} in the data directory (known: {listed})", name=name)


class WorkspaceExists(DataError):
    def __init__(self, name: str) -> None:
        super().__init__(f"workspace {name!r} already exists in the data directory; pick another name")


class NotADataDir(DataError):
    """A path given as the data directory that no workspace was ever added to: a missing
    folder (a mistyped path, say) or one holding other things."""

    code = "not-a-data-dir"

    def __init__(self, root: object, why: str) -> None:
        super().__init__(f"{root} is not a service data directory: {why}", path=str(root))
