"""A job for a workspace's writer (`writer.py`): one request's write, and its answer."""

from __future__ import annotations

from collections.abc import Callable, Hashable

from service.core.events.events import Event


class Job:
    """One request's write, run by the writer thread: on a batch shared with other jobs, or
    `alone` on the workspace itself (a push, a fetch: they move main their own way)."""

    def __init__(
        self,
        run: Callable[..., object],
        on_done: Callable[[], None],
        alone: bool = False,
        client: Hashable = None,
    ) -> None:
        """`on_done` is called from the writer thread once the job is answered; `client` is
        who asked (a connection), for the writer to tell who posts in a loop."""
        self.run = run
        self.client = client
        self.queued = 0.0  # when the job was queued (time.monotonic)
        self.answered = 0.0  # when the event loop took its answer to send it (0: not yet)
        self.on_done = on_done
        self.alone = alone
        self.result: object = None
        self.events: list[Event] = []
        self.error: BaseException | None = None
        self.commit: str | None = None

    def answer(self) -> object:
        if self.error is not None:
            raise self.error
        return self.result
