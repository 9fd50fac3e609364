"""The data directory's format version: `DATA/format`, one number and a newline.

A release reads and writes exactly one format (`DATA_FORMAT`). A data directory made before
formats were written holds no such file and is format 0: its files are laid out as format 1's
are, and the upgrade from it writes the file. A new data directory is stamped with this
release's format by the first write that makes it (`Data.claim`).

Formats, and what each upgrade does (`service/app/upgrade.py` runs them in order):

- 0: no `DATA/format` (made before formats were written).
- 1: `DATA/format` holds 1; every workspace store is of store format 1 (`adapters/store/layout.py`).
"""

from __future__ import annotations

from pathlib import Path

from service.adapters.data.errors import DataError
from service.adapters.store import layout

DATA_FORMAT = 1
FILE = "format"
UNVERSIONED = 0  # a data directory made before formats were written


class FormatNewer(DataError):
    """A data directory (or store) written by a later release."""

    code = "format-newer"

    def __init__(self, what: object, found: int, read: int) -> None:
        super().__init__(
            f"{what} is of format {found}, newer than this release reads ({read}); run the release "
            "that wrote it, or restore a backup made before that release's upgrade",
            path=str(what),
        )


class FormatOlder(DataError):
    """A data directory of a format this release reads only once upgraded."""

    code = "format-older"

    def __init__(self, what: object, found: int, read: int) -> None:
        super().__init__(
            f"{what} is of format {found}, older than this release's ({read}): it must be upgraded",
            path=str(what),
        )


class BadFormat(DataError):
    code = "corrupt-file"

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} does not hold a format number; restore it from a backup")


def read(root: Path) -> int:
    """The format of the data directory at `root` (0 when it has no format file)."""
    path = root / FILE
    try:
        text = path.read_text("ascii").strip()
    except FileNotFoundError:
        return UNVERSIONED
    except (UnicodeDecodeError, IsADirectoryError):
        raise BadFormat(path) from None
    if not text.isdigit():
        raise BadFormat(path)
    return int(text)


def stamp(root: Path, number: int = DATA_FORMAT) -> None:
    layout.atomic_write(root / FILE, f"{number}\n".encode())


def check(root: Path) -> None:
    """FormatNewer or FormatOlder unless the data directory is of this release's format."""
    found = read(root)
    if found > DATA_FORMAT:
        raise FormatNewer(root, found, DATA_FORMAT)
    if found < DATA_FORMAT:
        raise FormatOlder(root, found, DATA_FORMAT)
