"""`upgrade`: a data directory of an older format brought to this release's, after a backup.

Each step takes the data directory from one format to the next (`STEPS`), so a directory of
any older format passes through every one in order; a directory of this release's format is
left as it is (an upgrade run twice does nothing the second time), and a newer one is refused.
The service must be stopped meanwhile: it refuses to start on an older format anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from service.adapters.data.workspaces import Data


class Upgraded(msgspec.Struct, frozen=True, omit_defaults=True):
    data: str
    was: int  # the format found
    now: int  # the format it is of now
    backup: str | None = None  # the backup made first (none when nothing was to do)


def _versioned(data: Data) -> None:
    """0 → 1: every store is read as format 1 (a newer one stops the upgrade), then the data
    directory's format is written."""
    from service.adapters.data import formats
    from service.adapters.store import layout

    for name in data.names():
        layout.check_format(data.path(name))
    formats.stamp(data.root, 1)


STEPS: dict[int, Callable[[Data], None]] = {0: _versioned}  # from format N to N + 1


def upgrade(directory: str, backup_to: str) -> Upgraded:
    """The data directory at `directory` upgraded to this release's format, once backed up in
    the new file `backup_to`."""
    from service.adapters.data import formats
    from service.adapters.data.workspaces import Data
    from service.app.backup import backup

    data = Data(Path(directory)).check()
    was = formats.read(data.root)
    if was > formats.DATA_FORMAT:
        raise formats.FormatNewer(data.root, was, formats.DATA_FORMAT)
    if was == formats.DATA_FORMAT:
        return Upgraded(str(data.root), was, was)
    backup(str(data.root), backup_to)
    for number in range(was, formats.DATA_FORMAT):
        STEPS[number](data)
    return Upgraded(
        str(data.root), was, formats.read(data.root), str(Path(backup_to).expanduser().absolute())
    )


def text(done: Upgraded) -> str:
    if done.backup is None:
        return f"{done.data} is of format {done.now} already: nothing to upgrade"
    return f"upgraded {done.data} from format {done.was} to {done.now}; the backup made first: {done.backup}"
