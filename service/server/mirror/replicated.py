"""`self serve --replicated`: a write to a remote-backed workspace is answered only once its
backend holds it. The workspace's writer (`server/live/writer.py`) calls `Replicated.push`
after each group commit, on its thread and under the store lock: the sync protocol (the same
as a round's, `round.py`) puts the batch on the backend's main with compare-and-swap, fetching
and trying again after a jittered pause while other instances push first. Its answer is main
as the backend holds it, the commit each write's answer names (`Selfhub-Commit`); a push that
failed after its tries is the batch's `NotReplicated` (503)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.adapters.sync import Options
from service.server.mirror.round import sync_live

if TYPE_CHECKING:
    from service.server.live.space import LiveWorkspace
    from service.server.mirror.mirrors import Mirrors

# Tried until it is in (instances racing to the backend take turns after jittered pauses),
# within the write's 30 s (`api/writes.py`): a client waits for it.
PUSH_OPTIONS = Options(tries=40, timeout=5.0, deadline=20.0, pause=0.02, max_pause=0.4)


class Replicated:
    def __init__(self, mirrors: Mirrors, options: Options = PUSH_OPTIONS) -> None:
        self.mirrors = mirrors
        self.options = options

    def push(self, live: LiveWorkspace) -> str | None:
        """main pushed to `live`'s backend: the backend's head once it holds it; None when
        `live` has no backend (a workspace this service hosts)."""
        if self.mirrors.backend(live.name) is None:
            return None
        summary = sync_live(live, self.options)
        self.mirrors.synced(live.name, "write", summary)  # the other instances fetch it
        return summary.head
