"""Read-your-writes: whether a live workspace's states include a commit (`Selfhub-Min-Commit`),
and the wait for them to, asking its backend for a round meanwhile (`api/fresh.py`).

A state includes a commit when the commit is its head or an ancestor of its head: the sync
only ever moves main forward from what the backend held, so a commit a write's answer named
(`Selfhub-Commit`, main as the backend held it) is in every later head of every instance."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import anyio.to_thread

if TYPE_CHECKING:
    from service.server.live.hub import Hub
    from service.server.live.space import LiveWorkspace
    from service.server.mirror.mirrors import Mirrors

STEP_S = 0.05  # how often the wait looks at the head again
ASK_EVERY_S = 0.5  # how often it asks the backend for another round while it waits


def holds(live: LiveWorkspace, commit: str) -> bool:
    """Whether the states `live` serves include `commit` (40 hex digits)."""
    from dulwich.graph import can_fast_forward
    from dulwich.objects import ObjectID

    head = live.head
    if head is None:
        return False
    if head == commit:
        return True
    repo = live.store.repo
    wanted = ObjectID(commit.encode("ascii"))
    if wanted not in repo.object_store:
        return False
    return bool(can_fast_forward(repo, wanted, ObjectID(head.encode("ascii"))))


async def until_held(hub: Hub, mirrors: Mirrors, name: str, commit: str, wait_s: float) -> bool:
    """Wait, up to `wait_s`, until workspace `name`'s states include `commit`, asking its
    backend for a round (a fetch) now and then; whether they do."""
    live = hub.held(name)
    if live is None:
        live = await anyio.to_thread.run_sync(hub.workspace, name)
    if live.head == commit or await anyio.to_thread.run_sync(holds, live, commit):
        return True
    started = time.monotonic()
    asked = 0.0
    while True:
        now = time.monotonic()
        if now - asked >= ASK_EVERY_S:
            mirrors.ask(name, "min-commit")
            asked = now
        if now - started >= wait_s:
            return False
        await asyncio.sleep(STEP_S)
        if await anyio.to_thread.run_sync(holds, live, commit):
            return True
