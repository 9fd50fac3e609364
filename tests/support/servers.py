"""Real servers for the tests and the sync bench, on 127.0.0.1 only: free ports, waiting for a
server to listen, stopping it by the process it was started as, `git daemon`, and a TCP proxy
that counts the bytes each way.

The sync tests reach these through tests/support/sync_support.py; bench/sync.py, run
from the repository root, imports this module directly.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

GIT = shutil.which("git")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def refusing_port() -> Iterator[int]:
    """A loopback port that refuses every connection while the block runs: bound, never
    listening, so no other server can take it meanwhile."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes] | None = None, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the server exited with {proc.returncode} before listening")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.02)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port} after {seconds} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the server this test started, kill it if it lingers, reap it."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def git_daemon(base: Path, port: int | None = None) -> Iterator[int]:
    """`git daemon` exporting every repository under `base`, receive-pack on, on `port` (a free
    one unless given: a test that stops a daemon starts it again where it was); yields it."""
    assert GIT is not None, "the git daemon needs the git binary"
    port = port or free_port()
    proc = subprocess.Popen(
        [
            GIT,
            "daemon",
            "--reuseaddr",
            f"--base-path={base}",
            "--export-all",
            "--enable=receive-pack",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(base),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, proc)
        yield port
    finally:
        stop(proc)


class Counter:
    """Bytes a `proxy` moved: sent (client → server) and received (server → client), and the
    connections it took (a git:// fetch or push is one each)."""

    def __init__(self) -> None:
        self.sent = 0
        self.received = 0
        self.connections = 0
        self.lock = threading.Lock()

    def reset(self) -> None:
        with self.lock:
            self.sent = self.received = self.connections = 0


@contextlib.contextmanager
def proxy(target_port: int) -> Iterator[tuple[int, Counter]]:
    """A loopback TCP proxy to `target_port` that counts the bytes each way; yields its port."""
    counter = Counter()
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    stop = threading.Event()

    def pipe(src: socket.socket, dst: socket.socket, upstream: bool) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                with counter.lock:
                    if upstream:
                        counter.sent += len(data)
                    else:
                        counter.received += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

    def connect(client: socket.socket) -> None:
        with counter.lock:
            counter.connections += 1
        with client, socket.create_connection(("127.0.0.1", target_port)) as server:
            for end in (client, server):  # no Nagle delays added to the protocol's small writes
                end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            back = threading.Thread(target=pipe, args=(server, client, False), daemon=True)
            back.start()
            pipe(client, server, True)
            back.join()

    links: list[threading.Thread] = []

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except OSError:
                continue
            links.append(threading.Thread(target=connect, args=(client,), daemon=True))
            links[-1].start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1]), counter
    finally:
        stop.set()
        thread.join()
        listener.close()
        for link in links:  # each ends when both of its ends have closed
            link.join(timeout=10)
