"""Which workspaces of a data directory are mirrors of a git remote (their backend), and how:
`DATA/backends/<name>.json`, written by `self admin workspace add NAME --remote URL`.

The record holds the remote's URL (never a credential: `self admin` refuses one), the name of
the environment variable holding the webhook's secret (never the secret) and the poll period.
A workspace without a record is hosted by the service itself.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import msgspec

from service.adapters.data.errors import DataError
from service.adapters.store import layout
from service.core.commands.commands import SLUG
from service.core.errors import Invalid

BACKENDS_DIR = "backends"
DEFAULT_POLL_S = 60.0
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
PREVIOUS = "_PREVIOUS"  # VAR_PREVIOUS: the secret a rotation retires, accepted meanwhile


class Backend(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    url: str
    secret_env: str | None = None  # the variable holding the webhook secret (VAR and VAR_PREVIOUS)
    poll_s: Annotated[float, msgspec.Meta(ge=0)] = DEFAULT_POLL_S  # 0: no polling


class BadBackend(DataError):
    """A backend record that cannot be read, or settings it cannot hold."""


def check_env_name(name: str) -> str:
    if not ENV_NAME.match(name) or name.endswith(PREVIOUS):
        raise BadBackend(
            f"{name!r} is not an environment variable name to read the webhook secret from: use "
            "letters, digits and underscores (SELFHUB_WEBHOOK_SECRET, say), not ending in "
            f"{PREVIOUS} (VAR{PREVIOUS} holds the secret being rotated out)"
        )
    return name


def check_poll(seconds: float) -> float:
    if not seconds >= 0:  # also refuses NaN
        raise Invalid(f"{{poll}} {seconds}: give the seconds between polls, 0 for none", field="poll")
    return seconds


class Backends:
    """The backend records of one data directory (`DATA/backends/`)."""

    def __init__(self, root: Path) -> None:
        self.folder = root / BACKENDS_DIR

    def get(self, name: str) -> Backend | None:
        """Workspace `name`'s backend; None: the service hosts it."""
        path = self.folder / f"{name}.json"
        try:
            data = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            return msgspec.json.decode(data, type=Backend)
        except msgspec.DecodeError as exc:
            raise BadBackend(
                f"{path} is not a backend record ({exc}); remove it and add the workspace again"
            ) from None

    def put(self, name: str, backend: Backend) -> None:
        layout.atomic_write(self.folder / f"{name}.json", msgspec.json.encode(backend) + b"\n")

    def remove(self, name: str) -> None:
        (self.folder / f"{name}.json").unlink(missing_ok=True)

    def names(self) -> list[str]:
        """Every workspace with a backend, sorted."""
        if not self.folder.is_dir():
            return []
        return sorted(p.stem for p in self.folder.glob("*.json") if SLUG.fullmatch(p.stem))
