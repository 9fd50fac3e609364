"""The team service's search index: one SQLite FTS5 file over every workspace in DATA."""

from service.adapters.index.errors import BadLimit, QueryTooLong, SearchIndexError
from service.adapters.index.index import Refreshed, SearchIndex
from service.adapters.index.query import Found, Hit

__all__ = ["BadLimit", "Found", "Hit", "QueryTooLong", "Refreshed", "SearchIndex", "SearchIndexError"]
