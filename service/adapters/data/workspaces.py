"""The workspaces of a data directory: `DATA/workspaces/<name>/`, each a selfhub store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from service.adapters.data.errors import NoSuchWorkspace, WorkspaceExists
from service.adapters.store import Store
from service.adapters.store.errors import NotAStore
from service.core.commands.commands import SLUG
from service.core.commands.team import valid_name

if TYPE_CHECKING:
    from service.adapters.data.backends import Backends

WORKSPACES_DIR = "workspaces"
AUTH_DB = "auth.sqlite"
INDEX_DB = "index.sqlite"


class Data:
    """A data directory. Nothing is created until something is written."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()

    @property
    def auth_db(self) -> Path:
        return self.root / AUTH_DB

    @property
    def index_db(self) -> Path:
        return self.root / INDEX_DB

    @property
    def backends(self) -> Backends:
        """Which workspaces mirror a git remote (`backends.py`)."""
        from service.adapters.data.backends import Backends

        return Backends(self.root)

    def path(self, name: str) -> Path:
        """Where workspace `name` lives; Invalid for a name that is not a plain slug."""
        return self.root / WORKSPACES_DIR / valid_name("workspace", name)

    def add(self, name: str) -> Store:
        """Create workspace `name` as a new store."""
        target = self.path(name)
        if target.exists():
            raise WorkspaceExists(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        return Store.init(target)

    def names(self) -> list[str]:
        """Every workspace, sorted: the folders under workspaces/ that hold a store."""
        folder = self.root / WORKSPACES_DIR
        if not folder.is_dir():
            return []
        found = []
        for child in sorted(folder.iterdir()):
            if not SLUG.fullmatch(child.name):  # a folder someone else put there
                continue
            if (child / "workspace.json").is_file() and (child / ".git").exists():
                found.append(child.name)
        return found

    def has(self, name: str) -> bool:
        """Whether workspace `name` exists (two stats: every request asks)."""
        from service.core.errors import Invalid

        try:
            folder = self.path(name)
        except Invalid:
            return False
        return (folder / "workspace.json").is_file() and (folder / ".git").exists()

    def open(self, name: str) -> Store:
        try:
            return Store.open(self.path(name))
        except NotAStore:
            raise NoSuchWorkspace(name, self.names()) from None
