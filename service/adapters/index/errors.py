"""Errors of the search index. Every message says what to do next."""

from __future__ import annotations

from service.core.errors import SelfhubError


class SearchIndexError(SelfhubError):
    """Root of every error the search index raises."""


class QueryTooLong(SearchIndexError):
    def __init__(self, what: str, cap: int) -> None:
        super().__init__(f"the search query has too many {what} (at most {cap}); search for fewer words")


class BadLimit(SearchIndexError):
    def __init__(self, limit: int, cap: int) -> None:
        super().__init__(f"limit {limit}: ask for 1 to {cap} results")
