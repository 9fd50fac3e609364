"""A child forked from the service (the git endpoint spawns `git` that way, from a process
with many threads) never closes the connections its parent's threads hold: the child drops
those threads' locals as it starts, and a close there once hung the child on a SQLite lock
held at the fork, and the service with it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from service.adapters.auth.held import PerThread


def test_a_forked_child_closes_no_connection_of_its_parents_threads(tmp_path: Path) -> None:
    closed = tmp_path / "closed"

    def close(conn: str) -> None:
        with closed.open("a") as out:
            out.write(f"{conn} closed by {os.getpid()}\n")

    held: PerThread[str] = PerThread(close)
    ready, leave = threading.Event(), threading.Event()

    def worker() -> None:
        held.put("worker's")
        ready.set()
        leave.wait(30)

    thread = threading.Thread(target=worker)
    thread.start()
    assert ready.wait(30)
    child = os.fork()
    if child == 0:  # the child: the worker's locals are gone; exit without cleanup
        os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert not closed.exists(), closed.read_text()  # nothing closed in the child

    leave.set()
    thread.join(30)
    assert closed.read_text() == f"worker's closed by {os.getpid()}\n"  # the thread's end closes it here
