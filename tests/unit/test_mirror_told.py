"""A write into a remote-backed workspace's store from outside the service asks for a mirror
round once it is taken: the hub's observer (`mirrors.Told`) passes every count on and asks
`Mirrors.outside`, from whichever thread took the write, which schedules the ask on the
app's loop — only for a write the push gate passed, and only for a workspace with a backend."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from service.adapters.data.backends import Backend
from service.adapters.data.workspaces import Data
from service.server.live.hub import Hub
from service.server.mirror.mirrors import Mirrors, Told


class Counts:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def batch_committed(self, workspace: str, events: int) -> None:
        self.calls.append(("batch", workspace, events))

    def fold_lag(self, workspace: str, events: int) -> None:
        self.calls.append(("lag", workspace, events))

    def outside_write(self, workspace: str, events: int, refused: str | None, commit: str) -> None:
        self.calls.append(("outside", workspace, events, refused, commit))

    def backend_synced(self, workspace: str, trigger: str, ok: bool, seconds: float) -> None:
        self.calls.append(("synced", workspace, trigger, ok))


class Log:
    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def test_told_passes_every_count_on_and_asks_only_for_a_passed_write(tmp_path: Path) -> None:
    counts = Counts()
    told = Told(counts)
    asked: list[str] = []

    class Asked:
        def outside(self, name: str) -> None:
            asked.append(name)

    told.outside_write("acme", 1, None, "a" * 40)  # before the app sets `mirrors`: counted only
    told.mirrors = Asked()  # type: ignore[assignment]
    told.batch_committed("acme", 3)
    told.fold_lag("acme", 2)
    told.outside_write("acme", 0, "event-edited", "b" * 40)
    told.outside_write("acme", 4, None, "c" * 40)
    assert [c[0] for c in counts.calls] == ["outside", "batch", "lag", "outside", "outside"]
    assert asked == ["acme"]


def test_outside_asks_on_the_loop_from_another_thread(tmp_path: Path) -> None:
    data = Data(tmp_path)
    data.backends.put("acme", Backend("git://127.0.0.1:9/acme.git", poll_s=0))
    mirrors = Mirrors(data, Hub(data), lambda name: None, Log(), Counts())
    asked: list[tuple[str, str, bool]] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        mirrors.ask = lambda name, trigger: bool(  # type: ignore[method-assign]
            asked.append((name, trigger, asyncio.get_running_loop() is loop))
        )
        mirrors.outside("acme")  # before the start: no loop to ask on
        mirrors.start(threading.Event())
        thread = threading.Thread(target=lambda: [mirrors.outside(n) for n in ("acme", "hosted")])
        thread.start()
        thread.join()
        await asyncio.sleep(0.05)
        mirrors.stop()
        mirrors.outside("acme")  # stopping: nothing more is asked

    asyncio.run(main())
    assert asked == [("acme", "outside", True)]
