"""The policy cache: a project's applicable policy decisions, kept for the action gate.

`self gate` runs before every tool call a coding agent makes and needs only the project's
policies (`core/gates/action.py: policies`), not its state. `.local/cache/gate/<project>.json`
keeps them with where the two logs they were read from ended: every segment's name, size and
mtime, and a digest of each log's last segment (its complete lines, as the fold reads them).
A gate call whose logs still end exactly there rules on the cached policies and folds
nothing; anything else (a log grown, rewritten or touched, a file unreadable, garbled or
written by other code) is a miss, and the caller folds and `keep`s the policies again.

The key is checked as a whole, not advanced: a cache that is not an exact match is never
read, so a stale or corrupt one can cost a fold but never change a ruling.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from pathlib import Path

import msgspec

from service.adapters.store import layout
from service.adapters.store.segments import complete, read_segment
from service.core.events.events import WORKSPACE_LOG
from service.core.gates.action import Policy

FORMAT = 1
# The code a cached list depends on: reading and folding events, the ledger's derived views,
# the gate's choice of policies (a change to any of them invalidates every cache).
_MODEL = (
    "core/events",
    "core/fold",
    "core/ledger",
    "core/gates/action.py",
    "adapters/store/segments.py",
    "adapters/store/cache.py",
    "adapters/store/policies.py",
)


class End(msgspec.Struct, frozen=True, array_like=True):
    """Where a log ended: (name, size, mtime_ns) of every segment and the last one's digest."""

    segments: list[tuple[str, int, int]]
    digest: str


class Cached(msgspec.Struct, frozen=True):
    format: int
    model: str
    ends: list[End]  # the workspace log's, then the project log's
    policies: list[Policy]


_decoder = msgspec.json.Decoder(Cached)


def read(root: Path, project: str) -> list[Policy] | None:
    """The cached policies of `project`, or None unless both logs end where they were read."""
    try:
        cached = _decoder.decode(_path(root, project).read_bytes())
    except (OSError, ValueError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    if cached.format != FORMAT or cached.model != model():
        return None
    return cached.policies if cached.ends == ends(root, project) else None


def ends(root: Path, project: str) -> list[End] | None:
    """Where the workspace log and `project`'s log end now (None: a segment unreadable)."""
    try:
        return [_end(root, WORKSPACE_LOG), _end(root, project)]
    except OSError:
        return None


def keep(root: Path, project: str, policies: list[Policy], before: list[End] | None) -> None:
    """Keep `policies`, read from logs that ended at `before`, when they end there still (a write
    during the read leaves nothing kept); a cache that cannot be written is only slower."""
    if before is None or ends(root, project) != before:
        return
    data = msgspec.json.encode(Cached(FORMAT, model(), before, policies))
    with contextlib.suppress(OSError):
        path = _path(root, project)
        path.parent.mkdir(parents=True, exist_ok=True)
        layout.atomic_write(path, data, durable=False)


def _end(root: Path, log: str) -> End:
    folder = os.fspath(root / layout.log_dir(log)) + os.sep
    names = layout.segments(root, log)
    marks = []
    for name in names:
        stat = os.stat(folder + name)
        marks.append((name, stat.st_size, stat.st_mtime_ns))
    data = complete(read_segment(Path(folder + names[-1]))[0])[0] if names else b""
    return End(marks, hashlib.blake2b(data, digest_size=16).hexdigest())


def _path(root: Path, project: str) -> Path:
    # a folder of its own: a slug may hold dots, so `<slug>.<suffix>` could name another's file
    return root / layout.LOCAL_DIR / "cache" / "gate" / f"{layout.check_key(project)}.json"


@functools.cache
def model() -> str:
    """A fingerprint of the code the policies come from: its files' names, sizes and mtimes
    (and the package version, for a build without source files)."""
    from service import __version__

    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    hasher = hashlib.blake2b(__version__.encode(), digest_size=16)
    for part in _MODEL:
        for source in _sources(os.path.join(package, part)):
            with contextlib.suppress(OSError):
                stat = os.stat(source)
                hasher.update(f"{source}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return hasher.hexdigest()


def _sources(path: str) -> list[str]:
    """The Python files of a folder, or the file itself."""
    try:
        return sorted(e.path for e in os.scandir(path) if e.name.endswith(".py"))
    except NotADirectoryError:
        return [path]
    except OSError:
        return []
