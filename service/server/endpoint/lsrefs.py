"""git's protocol v2 `ls-refs`, answered by the endpoint itself: a store publishes main and
HEAD pointing at it, so listing them needs no git process (the fetch that follows is C
git's, `upload.py`). The answer is the one `git upload-pack` gives for the same refs."""

from __future__ import annotations

from dataclasses import dataclass

from service.server.endpoint import pkt
from service.server.endpoint.errors import BadRequest

COMMAND = b"command=ls-refs\n"
MAX_REQUEST = 64 * 1024
HEAD, MAIN = "HEAD", "refs/heads/main"
DELIM = b"0001"


@dataclass(frozen=True)
class Asked:
    symrefs: bool = False
    unborn: bool = False
    prefixes: tuple[str, ...] = ()


def parse(data: bytes) -> Asked:
    """An ls-refs request after its command line: capabilities, a delimiter, arguments, a
    flush. BadRequest when it is not one."""
    lines = _lines(data)
    if DELIM in lines:
        lines = lines[lines.index(DELIM) + 1 :]
    elif lines and lines[0] != pkt.FLUSH:
        raise BadRequest("an ls-refs request without its delimiter")
    if not lines or lines[-1] != pkt.FLUSH:
        raise BadRequest("an ls-refs request that does not end in a flush")
    symrefs = unborn = False
    prefixes: list[str] = []
    for raw in lines[:-1]:
        argument = raw.rstrip(b"\n").decode("utf-8", "replace")
        if argument == "symrefs":
            symrefs = True
        elif argument == "unborn":
            unborn = True
        elif argument.startswith("ref-prefix "):
            prefixes.append(argument.removeprefix("ref-prefix "))
        elif argument != "peel":  # no tags here: nothing is ever peeled
            raise BadRequest(f"ls-refs has no argument {argument[:60]!r}")
    return Asked(symrefs, unborn, tuple(prefixes))


def answer(head: str | None, asked: Asked) -> bytes:
    """The refs a store publishes, as ls-refs lists them for `asked`."""
    out = b""
    for name in (HEAD, MAIN):
        if asked.prefixes and not any(name.startswith(p) for p in asked.prefixes):
            continue
        target = f" symref-target:{MAIN}" if name == HEAD and asked.symrefs else ""
        if head is not None:
            out += pkt.line(f"{head} {name}{target}\n".encode("ascii"))
        elif name == HEAD and asked.unborn and asked.symrefs:  # as git: never a bare "unborn HEAD"
            out += pkt.line(f"unborn {name}{target}\n".encode("ascii"))
    return out + pkt.FLUSH


def _lines(data: bytes) -> list[bytes]:
    """The pkt-lines of `data`: each one's data, or the special packet itself (0000, 0001)."""
    out: list[bytes] = []
    at = 0
    while at < len(data):
        head = data[at : at + 4]
        try:
            size = int(head, 16)
        except ValueError:
            raise BadRequest(f"{head!r} is not a pkt-line length") from None
        if size in (0, 1):
            out.append(head)
            at += 4
            continue
        if size < 4 or at + size > len(data):
            raise BadRequest("an ls-refs request cut inside a pkt-line")
        out.append(data[at + 4 : at + size])
        at += size
    return out
