"""Real servers for the tests and the sync bench, on 127.0.0.1 only: free ports, waiting for a
server to listen, stopping it by the process it was started as, and `git daemon`.

The sync tests reach these through tests/integration/sync_support.py; bench/sync.py, run
from the repository root, imports this module directly.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
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
def git_daemon(base: Path) -> Iterator[int]:
    """`git daemon` exporting every repository under `base`, receive-pack on; yields its port."""
    assert GIT is not None, "the git daemon needs the git binary"
    port = free_port()
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
