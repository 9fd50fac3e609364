"""git-receive-pack as this endpoint speaks it: the advertisement of main, the commands of
a push, and the report the git client prints (side band 2 as "remote: …" lines).

Only `refs/heads/main` is kept: another ref is refused, and so is deleting main. The pack
is asked for whole (`no-thin`), so it is checked without reaching into the store first.

A shallow clone names its cut commits (`shallow <id>` lines before the commands). Its push is
taken when its pack connects to the store's history (index-pack finds every object it names);
a pack whose history stops at a cut commit the store lacks cannot be checked, and is refused
with what to do. Every refusal reaches git as `remote:` lines and a rejected ref (`ng`), never
as a dropped answer.
"""

from __future__ import annotations

import re

import msgspec

from service.server.endpoint import pkt
from service.server.endpoint.errors import BadRequest

MAIN = "refs/heads/main"
ZERO = "0" * 40
CAPABILITIES = "report-status delete-refs side-band-64k quiet atomic ofs-delta no-thin agent=selfhub"
MAX_COMMANDS = 64
MAX_LINES = 10_000  # commands or shallow lines: past these the request is not a push git makes
ATOMIC_FAILED = "atomic push failed"
UNSHALLOW = "run `git fetch --unshallow` (or clone in full) and push again"
_OID = re.compile(r"[0-9a-f]{40}")
_REF = re.compile(r"refs/[^\x00-\x20\x7f]{1,4096}")  # any ref git sends: one not main is refused by name


class Command(msgspec.Struct, frozen=True):
    old: str
    new: str
    ref: str

    @property
    def deletes(self) -> bool:
        return self.new == ZERO


class Request(msgspec.Struct, frozen=True):
    commands: list[Command]
    capabilities: frozenset[str]
    shallow: tuple[str, ...] = ()  # the commits a shallow clone's history stops at

    @property
    def atomic(self) -> bool:
        return "atomic" in self.capabilities

    @property
    def sideband(self) -> bool:
        return "side-band-64k" in self.capabilities

    @property
    def wants_report(self) -> bool:
        return "report-status" in self.capabilities

    @property
    def sends_pack(self) -> bool:
        return any(not c.deletes for c in self.commands)


def advertisement(head: str | None) -> bytes:
    """The answer to `GET info/refs?service=git-receive-pack`."""
    first = f"{head} {MAIN}" if head is not None else f"{ZERO} capabilities^{{}}"
    return (
        pkt.line(b"# service=git-receive-pack\n")
        + pkt.FLUSH
        + pkt.line(f"{first}\0{CAPABILITIES}\n".encode())
        + pkt.FLUSH
    )


async def read_request(body: pkt.Body) -> Request:
    """The commands of a push, after a shallow clone's `shallow` lines, up to their flush (the
    pack follows)."""
    commands: list[Command] = []
    shallow: list[str] = []
    capabilities: frozenset[str] = frozenset()
    while (data := await body.pkt()) is not None:
        if len(commands) + len(shallow) >= MAX_LINES:
            raise BadRequest(f"a push of more than {MAX_LINES:,} lines before its pack is not git's")
        text, _, caps = data.rstrip(b"\n").partition(b"\0")
        line = text.decode("utf-8", "replace")
        if not commands and line.startswith("shallow "):
            shallow.append(_shallow(line))
            continue
        if not commands:
            capabilities = frozenset(caps.decode("ascii", "replace").split())
        commands.append(_command(line))
    return Request(commands, capabilities, tuple(shallow))  # none: git's probe of a large push


def _shallow(text: str) -> str:
    oid = text.removeprefix("shallow ")
    if not _OID.fullmatch(oid):
        raise BadRequest(f"{text[:120]!r} is not a shallow line (shallow commit-id)")
    return oid


def _command(text: str) -> Command:
    parts = text.split(" ")
    if len(parts) != 3 or not all(_OID.fullmatch(p) for p in parts[:2]) or not _REF.fullmatch(parts[2]):
        raise BadRequest(f"{text[:120]!r} is not a ref update (old-id new-id ref)")
    return Command(*parts)


def too_many(request: Request) -> str | None:
    """Why the whole push is refused before its pack is read, if it is."""
    if len(request.commands) > MAX_COMMANDS:
        return f"a push may update at most {MAX_COMMANDS} refs; push refs/heads/main alone"
    return None


def cut_message(cut: list[str]) -> str:
    """What to do about a push whose history stops at the shallow commits `cut`."""
    return (
        f"refused: the push comes from a shallow clone whose history stops at {cut[0][:12]}, "
        f"a commit main does not hold, so its pack cannot be checked here; {UNSHALLOW}"
    )


NEVER_DELETED = ("main is never deleted", "main holds the published events: it is never deleted")


def never_landed(command: Command) -> tuple[str, str] | None:
    """Why `command` is refused whatever its pack holds (its reason and its message), if it is."""
    if command.ref != MAIN:
        return "only refs/heads/main is kept here", f"{command.ref}: only refs/heads/main is kept here"
    return NEVER_DELETED if command.deletes else None


def refuse_atomic(report: Report) -> bool:
    """Whether an atomic push is refused whole, before any ref moves: one of its refs is."""
    refused = [(c.ref, why) for c in report.request.commands if (why := never_landed(c)) is not None]
    for ref, (reason, message) in refused:
        report.refuse(ref, reason, message)
    if refused:
        report.refuse_all(ATOMIC_FAILED, "the push is atomic and a ref of it is refused: no ref moved")
    return bool(refused)


class Report:
    """The answer to a push: its unpack status, a line per ref, and messages for the user."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.unpack = "ok"
        self.results: dict[str, str | None] = {}  # ref → None (ok) or why not
        self.messages: list[str] = []

    def refuse(self, ref: str, reason: str, message: str | None = None) -> None:
        self.results[ref] = reason
        if message:
            self.messages.append(message)

    def refuse_all(self, reason: str, message: str | None = None, unpack: str | None = None) -> None:
        """Every ref of the push refused for `reason` (the unpack status too, when given)."""
        self.unpack = unpack or self.unpack
        for command in self.request.commands:
            self.results.setdefault(command.ref, reason)
        if message:
            self.messages.append(message)

    def accept(self, ref: str, message: str | None = None) -> None:
        self.results[ref] = None
        if message:
            self.messages.append(message)

    def encode(self) -> bytes:
        lines = [pkt.line(f"unpack {self.unpack}\n".encode())]
        for command in self.request.commands:
            why = self.results.get(command.ref, "not updated")
            said = f"ok {command.ref}" if why is None else f"ng {command.ref} {_one_line(why)}"
            lines.append(pkt.line(said.encode() + b"\n"))
        status = b"".join(lines) + pkt.FLUSH if self.request.wants_report else b""
        if not self.request.sideband:
            return status
        told = "".join(f"{_one_line(m, 4000)}\n" for m in self.messages).encode()
        return (
            (pkt.band(pkt.BAND_MESSAGE, told) if told else b"")
            + (pkt.band(pkt.BAND_DATA, status) if status else b"")
            + pkt.FLUSH
        )


def _one_line(text: str, most: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"
