"""The workspaces of a data directory: `DATA/workspaces/<name>/`, each a selfhub store."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from service.adapters.data.backends import BACKENDS_DIR
from service.adapters.data.errors import NoSuchWorkspace, NotADataDir, WorkspaceExists
from service.adapters.store import Store, layout
from service.adapters.store.errors import NotAStore, NotWritable, not_writable
from service.core.commands.commands import SLUG
from service.core.commands.team import valid_name

if TYPE_CHECKING:
    from service.adapters.data.backends import Backends

WORKSPACES_DIR = "workspaces"
AUTH_DB = "auth.sqlite"
INDEX_DB = "index.sqlite"
MARKER = "selfhub-data"  # written by the first workspace added: a data directory made
MARKER_TEXT = b"A selfhub service's data directory: its workspaces, users, tokens and search index.\n"
SERVICE_FILES = (WORKSPACES_DIR, AUTH_DB, INDEX_DB, BACKENDS_DIR)  # what one made before the marker holds
NOT_CONTENT = ("lost+found",)  # what a new volume's file system holds at its root


class Data:
    """A data directory. Nothing is created until something is written."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()

    def made(self) -> bool:
        """Whether the folder is a data directory: marked when its first workspace was added,
        or holding the service's files (one made before the marker was)."""
        return any((self.root / name).exists() for name in (MARKER, *SERVICE_FILES))

    def check(self) -> Data:
        """This data directory, or NotADataDir: a missing folder (a mistyped path is not made
        anew) or one holding other things. An empty folder is taken (a new volume, say)."""
        if self.made():
            return self
        if not self.root.exists():
            raise NotADataDir(self.root, "no such folder")
        if not self.root.is_dir():
            raise NotADataDir(self.root, "a file, not a folder")
        if any(p.name not in NOT_CONTENT for p in self.root.iterdir()):
            raise NotADataDir(self.root, "the folder holds other things and no workspace")
        return self

    def check_writable(self) -> None:
        """NotWritable when this user may not write the data directory or a file in it."""
        for path in (self.root, self.root / WORKSPACES_DIR, self.auth_db, self.index_db):
            wanted = os.W_OK | os.X_OK if path.is_dir() else os.W_OK
            if path.exists() and not os.access(path, wanted):
                raise NotWritable(path, "the data directory")

    def mark(self) -> None:
        """Mark the folder as a data directory (once)."""
        if not (self.root / MARKER).exists():
            layout.atomic_write(self.root / MARKER, MARKER_TEXT)

    def claim(self) -> Data:
        """This data directory; when nothing made it yet, marked and stamped with this
        release's format (`formats.py`) before its first file is written."""
        if not self.made():
            from service.adapters.data import formats

            formats.stamp(self.root)
            self.mark()
        return self

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
        self.check_writable()
        self.claim()
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if not_writable(exc):
                raise NotWritable(exc.filename or target.parent, "the data directory") from None
            raise
        self.mark()
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
