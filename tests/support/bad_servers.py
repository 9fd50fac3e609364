"""Servers that misbehave, for the sync deadline tests: one that never answers, one that
trickles its first answer a byte at a time, a remote whose pre-receive hook refuses."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

STEP = 0.3  # seconds between two bytes of a trickle: each read is answered well within a 1 s timeout

# what each protocol's first answer starts with, sent one byte at a time and never finished
OPENINGS = {
    "http": b"HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\nX-Slow: "
    + b"a" * 4096,
    "git": b"0fff" + b"a" * 4096,
}


@contextlib.contextmanager
def black_hole() -> Iterator[int]:
    """Accepts connections (the kernel's backlog does) and never reads or writes."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        yield int(server.getsockname()[1])


@contextlib.contextmanager
def trickler(opening: bytes, seconds: float = 30.0) -> Iterator[int]:
    """Answers every connection with `opening`, one byte every STEP seconds, for at most
    `seconds`; stops when the client goes away."""
    stop = threading.Event()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.1)

    def serve(conn: socket.socket) -> None:
        with conn:
            ends = time.monotonic() + seconds
            for byte in opening:
                if stop.is_set() or time.monotonic() > ends:
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return  # the client cut the connection
                stop.wait(STEP)

    def accept() -> None:
        workers = []
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            worker = threading.Thread(target=serve, args=(conn,), daemon=True)
            worker.start()
            workers.append(worker)
        for worker in workers:
            worker.join(timeout=5)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join(timeout=10)
        server.close()


REASON = "main is frozen for the release; ask the release manager"


def refusing(repo: Path) -> None:
    hook = repo / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\necho '{REASON}' >&2\nexit 1\n")
    hook.chmod(0o755)
