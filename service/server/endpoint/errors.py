"""Errors of the git endpoint; each message says what to do."""

from __future__ import annotations

from service.core.errors import SelfhubError


class EndpointError(SelfhubError):
    """Root of the git endpoint's errors."""

    status = 400


class BadRequest(EndpointError):
    """The client's request is not git's protocol as this endpoint speaks it."""


class TooLarge(EndpointError):
    status = 413


class GitMissing(EndpointError):
    """The `git` program this endpoint runs for fetches and pack intake is not installed."""

    status = 503
