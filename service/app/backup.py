"""Backups of a team service's data directory, made while it serves (`adapters/data/archive.py`),
and their restore into a new folder, verified."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.adapters.data.archive import Manifest


def backup(directory: str, to: str) -> Manifest:
    """A backup of the data directory at `directory` in the new file `to`; its manifest."""
    from service.adapters.data import archive
    from service.adapters.data.packs import BackupError
    from service.adapters.data.workspaces import Data

    target = Path(to).expanduser().absolute()
    if target.exists():
        raise BackupError(f"{target} exists: a backup is written to a new file")
    data = Data(Path(directory)).check()
    return archive.write(data, target)


def restore(file: str, directory: str) -> Manifest:
    """The backup in `file` restored into `directory` (new or empty) and verified; its manifest."""
    from service.adapters.data import archive

    return archive.restore(Path(file).expanduser().absolute(), Path(directory).expanduser().absolute())


def summary(manifest: Manifest) -> str:
    """The manifest as a person reads it: one line, then one per workspace."""
    lines = [
        f"data format {manifest.data_format}, made {manifest.made}: {len(manifest.workspaces)} "
        f"workspaces, {manifest.users} users, {manifest.tokens} tokens"
    ]
    for space in manifest.workspaces:
        counts = space.counts
        lines.append(
            f"  {space.name}: main {space.head[:12]}, {counts.events} events, {counts.commits} commits, "
            f"{counts.objects} objects"
        )
    return "\n".join(lines)
