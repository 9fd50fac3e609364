"""The team service's search index: one SQLite FTS5 file over every workspace in DATA."""

from service.index.errors import BadLimit, QueryTooLong, SearchIndexError
from service.index.index import Refreshed, SearchIndex
from service.index.query import Hit

__all__ = ["BadLimit", "Hit", "QueryTooLong", "Refreshed", "SearchIndex", "SearchIndexError"]
