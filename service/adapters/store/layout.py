"""Where things live in a store: log keys, segment files, the machine-local folder."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import msgspec

from service.core.commands.config import STORE_FORMAT
from service.core.errors import Invalid
from service.core.events.events import WORKSPACE_LOG as WORKSPACE_LOG  # the workspace log's key
from service.core.gates.event_gate import display as display  # how a log is named in messages

SEGMENT_EVENTS = 1000
CONFIG_FILE = "workspace.json"
LOCAL_DIR = ".local"
SEGMENT_NAME = re.compile(r"^[0-9]{6}\.jsonl$")
LOG_KEY = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,62}$")


def format_problem(found: int) -> str | None:
    """Why a store of format `found` (workspace.json's `format`) cannot be read here, or None.

    A store's format is its layout: the files of its tree and what they hold. It lives in
    workspace.json, in the tree, so it travels with the store: a replica (a clone, a remote, the
    service's copy) is of the format of the tree it holds, and intake refuses a tree of a newer
    one. Format 1 is the layout of every store made before formats were written, so it is
    never written (an absent `format` is 1) and releases that predate formats sync with it."""
    if found > STORE_FORMAT:
        return (
            f"is of store format {found}, newer than this release reads ({STORE_FORMAT}); "
            "a later release of selfhub reads it"
        )
    return None


def check_format(root: Path) -> None:
    """NewerStore when the store at `root` is of a format this release does not read; costs
    a read of workspace.json, decoded only when it names a format."""
    from service.adapters.store.errors import NewerStore

    data = (root / CONFIG_FILE).read_bytes()
    if b'"format"' not in data:
        return
    problem = format_problem(_format_of(data))
    if problem is not None:
        raise NewerStore(root / CONFIG_FILE, problem)


class _Format(msgspec.Struct):
    format: int = STORE_FORMAT


def _format_of(data: bytes) -> int:
    try:
        return msgspec.json.decode(data, type=_Format).format
    except (msgspec.DecodeError, msgspec.ValidationError):
        return STORE_FORMAT  # not settings at all: reading the settings says why


def check_key(log: str) -> str:
    """The log key itself; Invalid unless it is "" (workspace) or a safe project slug."""
    if log != WORKSPACE_LOG and (not LOG_KEY.match(log) or ".." in log):
        raise Invalid(
            f"{log!r} is not a project slug: use lowercase letters, digits and dashes, "
            "starting with a letter or digit"
        )
    return log


def log_dir(log: str) -> str:
    """The log folder relative to the store root, with forward slashes."""
    check_key(log)
    return "workspace/log" if log == WORKSPACE_LOG else f"projects/{log}/log"


def segment_name(index: int) -> str:
    return f"{index:06d}.jsonl"


def segment_index(name: str) -> int:
    return int(name[:6])


def segments(root: Path, log: str) -> list[str]:
    """The segment file names of a log, in order (empty when the log has no folder)."""
    try:
        names = [e.name for e in os.scandir(root / log_dir(log)) if SEGMENT_NAME.match(e.name)]
    except FileNotFoundError:
        return []
    return sorted(names)


def project_logs(root: Path) -> list[str]:
    """Every project slug that has a log folder, sorted."""
    try:
        entries = list(os.scandir(root / "projects"))
    except FileNotFoundError:
        return []
    return sorted(e.name for e in entries if LOG_KEY.match(e.name) and (Path(e.path) / "log").is_dir())


def cache_file(root: Path, log: str) -> Path:
    name = "_workspace" if log == WORKSPACE_LOG else check_key(log)
    return root / LOCAL_DIR / "cache" / f"{name}.msgpack"


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write `data` to `path` through a temporary file and os.replace."""
    import secrets  # here: a read (the gate, context) writes nothing and never needs it

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())
    os.replace(tmp, path)


def overwrite(path: Path, data: bytes) -> None:
    """Write `data` over a small file where it is (made if missing): no new file, as a
    rename needs, and no fsync. For a few bytes in the file's first sector, which a disk
    writes whole, a crash leaves the old content or the new."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def split_segments(lines: list[bytes]) -> dict[str, bytes]:
    """A log's lines (each ending in a newline) as its segment files: 1,000 lines each, in order.

    The segmentation is a function of the lines alone, so two replicas holding the same log
    hold the same files. An empty log is one empty segment.
    """
    if not lines:
        return {segment_name(0): b""}
    return {
        segment_name(n // SEGMENT_EVENTS): b"".join(lines[n : n + SEGMENT_EVENTS])
        for n in range(0, len(lines), SEGMENT_EVENTS)
    }


def log_of_path(path: str) -> str | None:
    """The log a store-relative path is a segment of ("" for the workspace log), else None."""
    parts = path.split("/")
    if len(parts) == 3 and parts[:2] == ["workspace", "log"] and SEGMENT_NAME.match(parts[2]):
        return WORKSPACE_LOG
    if (
        len(parts) == 4
        and parts[0] == "projects"
        and parts[2] == "log"
        and LOG_KEY.match(parts[1])
        and ".." not in parts[1]
        and SEGMENT_NAME.match(parts[3])
    ):
        return parts[1]
    return None


def by_log(paths: Iterable[str]) -> dict[str, list[str]]:
    """The segment paths among `paths`, sorted, grouped by the log they are segments of."""
    found: dict[str, list[str]] = {}
    for path in sorted(paths):
        log = log_of_path(path)
        if log is not None:
            found.setdefault(log, []).append(path)
    return found
