"""Machine-local facts under `.local/`: the pid ledger, checkout links and the gate's rulings.
Never synced.

Also the `.selfhub` marker a checkout carries (`{"project": slug}`), found by walking up.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import msgspec

from service.adapters.store.errors import BadMarker, CorruptFile
from service.adapters.store.layout import atomic_write, check_key
from service.core.errors import Invalid

Liveness = Literal["running", "exited", "stale", "other-machine"]


class Machine(msgspec.Struct, frozen=True):
    hostname: str
    boot_id: str


class PidRecord(msgspec.Struct, frozen=True):
    """A process started for a work unit, as this machine saw it."""

    pid: int
    project: str
    hostname: str
    boot_id: str
    start_ticks: int | None = None


class Ledger(msgspec.Struct):
    pids: dict[str, PidRecord] = msgspec.field(default_factory=dict)
    links: dict[str, str] = msgspec.field(default_factory=dict)


def this_machine() -> Machine:
    """The hostname and the kernel's boot id (empty where the system has none)."""
    import socket  # here: the gate and context never ask, and socket costs them a few ms

    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = ""
    return Machine(socket.gethostname(), boot)


def start_ticks(pid: int) -> int | None:
    """When a process started, in clock ticks since boot (Linux), to tell a reused pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return int(fields[19]) if len(fields) > 19 else None


def liveness(record: PidRecord, machine: Machine | None = None) -> Liveness:
    """running, exited, stale (rebooted since, or the pid is another process now), other-machine."""
    here = machine or this_machine()
    if record.hostname != here.hostname:
        return "other-machine"
    if record.boot_id and here.boot_id and record.boot_id != here.boot_id:
        return "stale"
    try:
        os.kill(record.pid, 0)
    except ProcessLookupError:
        return "exited"
    except PermissionError:
        pass  # it exists and belongs to someone else
    if record.start_ticks is not None and start_ticks(record.pid) not in (None, record.start_ticks):
        return "stale"
    return "running"


class Local:
    """The machine-local ledger of one store (`<root>/.local/local.json`)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / "local.json"

    def record_pid(self, work_id: str, pid: int, project: str) -> PidRecord:
        machine = this_machine()
        record = PidRecord(pid, project, machine.hostname, machine.boot_id, start_ticks(pid))
        with self._editing() as ledger:
            ledger.pids[work_id] = record
        return record

    def forget_pid(self, work_id: str) -> None:
        with self._editing() as ledger:
            ledger.pids.pop(work_id, None)

    def pids(self) -> dict[str, PidRecord]:
        return dict(self._read().pids)

    def runs(self) -> dict[str, str]:
        """The liveness of every process recorded here, judged now, on this machine."""
        return {work: liveness(record) for work, record in self.pids().items()}

    def link(self, slug: str, path: Path) -> None:
        """Remember that the checkout at `path` works on project `slug`."""
        check_key(slug)
        with self._editing() as ledger:
            ledger.links[str(Path(path).resolve())] = slug

    def unlink(self, path: Path) -> None:
        with self._editing() as ledger:
            ledger.links.pop(str(Path(path).resolve()), None)

    def links(self) -> dict[str, str]:
        return dict(self._read().links)

    def linked_project(self, path: Path) -> str | None:
        """The project linked to `path` or to the nearest of its parents."""
        links = self._read().links
        here = Path(path).resolve()
        for candidate in (here, *here.parents):
            slug = links.get(str(candidate))
            if slug is not None:
                return slug
        return None

    def pushers(self) -> Mapping[str, str]:
        """Event id → who pushed it, for the pushed events that claim another author or none
        (`pushes.py`, the service's record of the pushes into a store it hosts)."""
        from service.adapters.store import pushes

        return pushes.relayed(self.folder)

    def log_ruling(self, ruling: dict[str, object]) -> None:
        """The gate's rulings, one JSON line each, in `gate.jsonl`."""
        path = self.folder / "gate.jsonl"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            stamped = {"ts": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"), **ruling}
            with path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(stamped, sort_keys=True) + "\n")
        except OSError:
            pass  # a ruling that cannot be logged still answers the hook

    def _read(self) -> Ledger:
        try:
            return msgspec.json.decode(self.path.read_bytes(), type=Ledger)
        except FileNotFoundError:
            return Ledger()
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise CorruptFile(
                f"{self.path} cannot be read ({exc}); it holds only machine-local facts, "
                "so delete it and relink your checkouts"
            ) from exc

    @contextmanager
    def _editing(self) -> Iterator[Ledger]:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / "local.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            ledger = self._read()
            yield ledger
            data = msgspec.json.format(msgspec.json.encode(ledger, order="sorted"), indent=2)
            atomic_write(self.path, data + b"\n")
        finally:
            os.close(fd)


def write_marker(path: Path, slug: str, workspace: Path | None = None) -> Path:
    """Write `<path>/.selfhub` naming the project this checkout works on and, when given, the
    workspace store it is in (so commands run there need no selection)."""
    from service.core.ledger.worksets import MARKER

    check_key(slug)
    marker = Path(path) / MARKER
    data = {"project": slug} | ({"workspace": str(Path(workspace).resolve())} if workspace else {})
    atomic_write(marker, json.dumps(data, sort_keys=True).encode() + b"\n")
    return marker


def find_marker(start: Path) -> str | None:
    """The project named by the nearest `.selfhub` file at `start` or above, if any."""
    marker = _nearest(start)
    return None if marker is None else _marker_project(marker)


def marker_workspace(start: Path) -> str | None:
    """The workspace store the nearest `.selfhub` file at `start` or above names, if any (a
    marker written before links named one names none)."""
    marker = _nearest(start)
    if marker is None:
        return None
    _marker_project(marker)  # a marker that cannot be read says so, whatever is asked of it
    found = json.loads(marker.read_text("utf-8")).get("workspace")
    return found if isinstance(found, str) and found else None


def _nearest(start: Path) -> Path | None:
    from service.core.ledger.worksets import MARKER

    here = Path(start).resolve()
    for folder in (here, *here.parents):
        marker = folder / MARKER
        if marker.is_file():
            return marker
    return None


def _marker_project(marker: Path) -> str:
    try:
        data = json.loads(marker.read_text("utf-8"))
        slug = data["project"]
        if not isinstance(slug, str):
            raise TypeError("project is not a string")
        return check_key(slug)
    except (OSError, ValueError, KeyError, TypeError, Invalid) as exc:
        raise BadMarker(f"{marker} is not a selfhub marker ({exc})") from exc
