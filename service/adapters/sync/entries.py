"""What an entry of a tree from outside may be, told before its content is read: its name
(UTF-8, not empty, `.`, `..` or a `.git` look-alike), its mode (a regular file or a tree), and
its size, read from the object's pack header. The intake gate (`intake.py`) asks these."""

from __future__ import annotations

import unicodedata
import zlib

from dulwich.objects import ObjectID, hex_to_sha
from dulwich.repo import Repo

from service.adapters.store import gitcommit

REGULAR = frozenset({0o100644, 0o100755})
PLAIN = frozenset({0o100644})  # what a push into a hosted store may hold: no executable bit
SYMLINK, GITLINK = 0o120000, 0o160000

# Code points HFS+ ignores in names, so `.g\u200cit` is `.git` there (git's own list).
_IGNORABLE = frozenset(
    "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"
)


def bad_name(name: str) -> str | None:
    """Why a tree entry's name is refused anywhere in a store, or None."""
    if name in ("", ".", ".."):
        return f"has a {name or 'empty'!r} path component"
    folded = "".join(c for c in unicodedata.normalize("NFC", name) if c not in _IGNORABLE).casefold()
    if folded.rstrip(". ") == ".git" or folded.rstrip(". ").startswith("git~"):
        return "has a component that names git's own folder (.git)"
    if "/" in name or "\\" in name or any(not c.isprintable() for c in name):
        return "has a name with a slash, a backslash or a control character"
    if name != name.rstrip(". "):
        return "has a name ending in a dot or a space (another name on some filesystems)"
    return None


def bad_mode(mode: int, regular: frozenset[int] = REGULAR) -> str | None:
    """Why a tree entry's mode is refused, or None for a file of a `regular` mode or a tree."""
    if mode in regular or mode == gitcommit.DIR_MODE:
        return None
    if mode in REGULAR:
        return (
            f"has file mode {mode:o} (an executable file; only mode 100644 is taken here): "
            "clear its executable bit in git and commit again"
        )
    if mode == SYMLINK:
        return "is a symbolic link (a store holds regular files only)"
    if mode == GITLINK:
        return "is a submodule link (gitlink; a store holds regular files only)"
    return f"has file mode {mode:o} (a store holds regular files and folders only)"


def printable(path: str, most: int = 160) -> str:
    """A path safe to print: control characters escaped, length bounded."""
    safe = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in path)
    return safe if len(safe) <= most else safe[: most - 1] + "…"


# --- sizes from object headers ---------------------------------------------------------------

_OFS_DELTA, _REF_DELTA = 6, 7


def object_size(repo: Repo, sha: ObjectID) -> int | None:
    """An object's size read from its pack header (the delta's target size for a delta), without
    inflating it; None when the object is not in a pack this can read (the caller reads it)."""
    try:
        raw = hex_to_sha(sha)
    except (ValueError, TypeError):
        return None
    for pack in repo.object_store.packs:
        try:
            offset = pack.index.object_offset(raw)
            # dulwich has no public "size at offset"; its PackData buffer is the pack file itself.
            buffer = pack.data._buffer()
            return _packed_size(buffer, offset)
        except KeyError:
            continue
        except (AttributeError, IndexError, ValueError, zlib.error):
            return None
    return None


def _varint(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """git's size varint (7 bits a byte, least significant first): (value, next position)."""
    value, shift = 0, 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _packed_size(buffer: object, offset: int) -> int:
    head = bytes(buffer[offset : offset + 32])  # type: ignore[index]
    byte = head[0]
    kind, size, shift, pos = (byte >> 4) & 7, byte & 15, 4, 1
    while byte & 0x80:
        byte = head[pos]
        pos += 1
        size |= (byte & 0x7F) << shift
        shift += 7
    if kind not in (_OFS_DELTA, _REF_DELTA):
        return size
    if kind == _OFS_DELTA:
        while head[pos] & 0x80:
            pos += 1
        pos += 1
    else:
        pos += 20
    start = offset + pos
    stream = zlib.decompressobj().decompress(bytes(buffer[start : start + 4096]), 24)  # type: ignore[index]
    _, at = _varint(stream, 0)  # the delta's base size, then its target's
    return _varint(stream, at)[0]
