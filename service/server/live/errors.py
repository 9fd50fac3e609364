"""Errors of the service's live workspaces."""

from __future__ import annotations

from service.core.errors import SelfhubError


class LiveError(SelfhubError):
    """Root of every error `service.server.live` raises."""

    code = "store"


class Stopping(LiveError):
    """The service is shutting down: the write was not taken."""

    code = "stopping"

    def __init__(self) -> None:
        super().__init__("the service is stopping and takes no more writes; retry against it once it is back")


class WriteTimeout(LiveError):
    """A write was not committed in time; it may still land, so a retry should carry ids."""

    code = "write-timeout"

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"the write was not committed within {seconds:g} s; it may still land: retry with the "
            "same event ids and it is written once"
        )


class CommitFailed(LiveError):
    """The batch holding the write could not be committed; nothing of it was written."""

    code = "commit-failed"

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"the commit failed and nothing of the write was kept: {cause}; retry")


class NotReplicated(LiveError):
    """`--replicated`: the batch holding the write was committed here but its push to the
    workspace's backend failed, so it is not acknowledged. Its events stay in this instance's
    store and the next round pushes them: a retry of a post with the same event ids is then
    written once; a command retried without ids may be written twice."""

    code = "not-replicated"

    def __init__(self, cause: BaseException) -> None:
        super().__init__(
            f"the workspace's backend did not take the write ({cause}); it is not acknowledged: "
            "retry (a post with the same event ids is written once)"
        )


class Unopenable(LiveError):
    """A workspace of DATA could not be opened (its store unreadable): the service is not ready."""

    def __init__(self, name: str, cause: BaseException) -> None:
        super().__init__(
            f"workspace {name!r} could not be opened ({type(cause).__name__}: {cause}); `self doctor` in "
            "its store says what is wrong; repair or restore it, then restart the service"
        )
