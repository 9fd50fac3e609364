"""git-receive-pack as this endpoint speaks it: the advertisement of main, the commands of
a push, and the report the git client prints (side band 2 as "remote: …" lines).

Only `refs/heads/main` is kept: another ref is refused, and so is deleting main. The pack
is asked for whole (`no-thin`), so it is checked without reaching into the store first.
"""

from __future__ import annotations

import re

import msgspec

from service.server.endpoint import pkt
from service.server.endpoint.errors import BadRequest

MAIN = "refs/heads/main"
ZERO = "0" * 40
CAPABILITIES = "report-status delete-refs side-band-64k quiet ofs-delta no-thin agent=selfhub"
MAX_COMMANDS = 64
_OID = re.compile(r"[0-9a-f]{40}")
_REF = re.compile(r"refs/[A-Za-z0-9._/-]{1,200}")


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
    """The commands of a push, up to their flush (the pack follows)."""
    commands: list[Command] = []
    capabilities: frozenset[str] = frozenset()
    while (data := await body.pkt()) is not None:
        if len(commands) >= MAX_COMMANDS:
            raise BadRequest(f"a push may update at most {MAX_COMMANDS} refs")
        text, _, caps = data.rstrip(b"\n").partition(b"\0")
        if not commands:
            capabilities = frozenset(caps.decode("ascii", "replace").split())
        commands.append(_command(text.decode("utf-8", "replace")))
    return Request(commands, capabilities)  # none: git's probe of a large push (auth, not the pack)


def _command(text: str) -> Command:
    if text.startswith("shallow "):
        raise BadRequest("pushes from a shallow clone are not taken here: clone in full (self clone)")
    parts = text.split(" ")
    if len(parts) != 3 or not all(_OID.fullmatch(p) for p in parts[:2]) or not _REF.fullmatch(parts[2]):
        raise BadRequest(f"{text[:120]!r} is not a ref update (old-id new-id ref)")
    return Command(*parts)


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
