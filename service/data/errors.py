"""Errors of the data directory. Every message says what to do next."""

from __future__ import annotations


class DataError(Exception):
    """Root of every error the data directory raises."""


class NoSuchWorkspace(DataError):
    def __init__(self, name: str, known: list[str]) -> None:
        listed = ", ".join(known) or "none yet"
        super().__init__(
            f"no workspace {name!r} in the data directory (known: {listed}); "
            "`self admin workspace add NAME --data DIR` creates one"
        )


class WorkspaceExists(DataError):
    def __init__(self, name: str) -> None:
        super().__init__(f"workspace {name!r} already exists in the data directory; pick another name")
