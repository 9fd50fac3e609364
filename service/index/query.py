"""Searching the index: the candidates come from SQLite, the order from the model.

FTS5 finds the records holding any term (trigram phrases, so substrings, as `self search`
matches); `service/model/search.py` ranks them, so the index and `self search` cannot
disagree: there is one ranking. bm25 is not used: it scores trigram statistics, which is
not the reference ranking (every term first, then distinct terms, then occurrences, then
the current project, then the newest).

A user's query never reaches FTS5's query language: every term is one quoted phrase (a `"`
doubled inside), so `"`, `*`, `-`, `NEAR`, `AND`, `OR` and parentheses are plain characters.
A term shorter than three characters has no trigram: it is found with `instr` instead.
The candidates may only be too many, never too few (a NUL is stored and looked for as
U+FFFD): the model's ranking drops a record that matches no term.
"""

from __future__ import annotations

import msgspec
import sqlite_utils

from service.index.errors import BadLimit, QueryTooLong
from service.model import search as ranking
from service.model.search import Pair
from service.model.state import Entity
from service.store.cache import paused_gc

MAX_QUERY = 1000  # characters of a query
MAX_TERMS = 32  # distinct terms of a query
MAX_LIMIT = 200  # results of one search
DEFAULT_LIMIT = 20
_TRIGRAM = 3
_NUL = "\x00"  # FTS5 and SQLite's string functions stop at it; stored as U+FFFD instead
_decode = msgspec.msgpack.Decoder(Entity).decode


class Hit(msgspec.Struct, frozen=True):
    """One search result; `project` is "" for a record of the workspace's own log, `rank` its
    place in the answer (1 first)."""

    workspace: str
    project: str
    id: str
    label: str
    text: str
    status: str
    rank: int


def searchable(text: str) -> str:
    return text.replace(_NUL, "\ufffd")


def decode_entity(blob: bytes) -> Entity:
    return _decode(blob)


def phrase(term: str) -> str:
    """`term` as one FTS5 string: a phrase whatever characters it holds."""
    return '"' + searchable(term).replace('"', '""') + '"'


class Found(msgspec.Struct, frozen=True, gc=False):
    """One ranked record with the workspace and log (`""`: the workspace's own) holding it."""

    workspace: str
    log: str
    entity: Entity


def search(
    db: sqlite_utils.Database,
    q: str,
    project: str | None,
    workspaces: list[str],
    limit: int,
    exposure: str | None,
) -> list[Hit]:
    check_limit(limit)
    found = ranked(db, q, project, workspaces, exposure)[:limit]
    return [_hit(f.entity, f.workspace, f.log, place) for place, f in enumerate(found, 1)]


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise BadLimit(limit, MAX_LIMIT)
    return limit


def check_query(q: str) -> list[str]:
    """The terms of `q`; QueryTooLong past the caps."""
    if len(q) > MAX_QUERY:
        raise QueryTooLong("characters", MAX_QUERY)
    terms = ranking.terms_of(q)
    if len(terms) > MAX_TERMS:
        raise QueryTooLong("words", MAX_TERMS)
    return terms


def ranked(
    db: sqlite_utils.Database, q: str, project: str | None, workspaces: list[str], exposure: str | None
) -> list[Found]:
    """Every match, in the model's order."""
    terms = check_query(q)
    if not workspaces:
        return []
    where, args = _where(terms, workspaces, exposure)
    rows = db.execute(
        f"SELECT workspace, log, entity FROM records WHERE {where} ORDER BY workspace, log, seq", args
    ).fetchall()
    with paused_gc():  # thousands of decoded records, none of them garbage
        entities = [_decode(row[2]) for row in rows]
        # `(entity, current)` pairs in (workspace, log, fold) order, as `self search` builds them
        pool: list[Pair] = [(e, row[1] == project) for e, row in zip(entities, rows, strict=True)]
        order = ranking.search(q, pool, exposure is None, exposure)
    row_of = {id(e): row for e, row in zip(entities, rows, strict=True)}  # ids repeat across logs
    return [Found(row_of[id(e)][0], row_of[id(e)][1], e) for e in order]


class Page(msgspec.Struct, frozen=True):
    """One answer's worth of a search: every match's id in order (what short ids and the
    count are made of) and the first matches with their records."""

    ids: list[str]
    top: list[Found]


def page(
    db: sqlite_utils.Database,
    q: str,
    project: str | None,
    workspaces: list[str],
    exposure: str | None,
    limit: int,
) -> Page:
    """`ranked(...)`, ordered by SQLite itself: the model's score (`search.search`: terms
    missed, then occurrences, then the current project, then the newest) computed from each
    record's stored haystack, so only the first `limit` records are decoded. `ranked` is the
    reference it must agree with (tests/integration/test_search_service.py)."""
    check_limit(limit)
    terms = check_query(q)
    if not workspaces:
        return Page([], [])
    where, args = _where(terms, workspaces, exposure)
    score, score_args = _score(terms)
    rows = db.execute(
        f"SELECT rowid, id FROM (SELECT rowid, id, workspace, log, seq, created, {score} + (log IS NOT ?)"
        f" AS score FROM records WHERE {where}) WHERE score < ?"
        " ORDER BY score, created DESC, workspace, log, seq",
        [*score_args, project, *args, len(terms) * ranking.MISSED if terms else 2],  # no terms: all
    ).fetchall()
    first = [row[0] for row in rows[:limit]]
    marks = ", ".join("?" * len(first))
    held = db.execute(f"SELECT rowid, workspace, log, entity FROM records WHERE rowid IN ({marks})", first)
    found = {row[0]: Found(row[1], row[2], _decode(row[3])) for row in held.fetchall()}
    return Page([row[1] for row in rows], [found[r] for r in first])


def _score(terms: list[str]) -> tuple[str, list[object]]:
    """The SQL of `search.search`'s integer score over the stored haystack `hay`: per term,
    twice its (non-overlapping) occurrences, negated, or MISSED when it does not occur."""
    if not terms:
        return "0", []
    parts: list[str] = []
    args: list[object] = []
    for term in terms:
        needle = searchable(term)
        parts.append(
            "CASE WHEN instr(hay, ?) > 0 THEN -2 * ((length(hay) - length(replace(hay, ?, ''))) / length(?))"
            f" ELSE {ranking.MISSED} END"
        )
        args += [needle, needle, needle]
    return f"({' + '.join(parts)})", args


def _where(terms: list[str], workspaces: list[str], exposure: str | None) -> tuple[str, list[object]]:
    # Only FTS5 terms: the matches drive the query. `+` keeps SQLite from walking the
    # (workspace, log, seq) index instead, which reads every record of the workspaces.
    driven = bool(terms) and all(len(t) >= _TRIGRAM for t in terms)
    column = "+{}" if driven else "{}"
    clauses = [f"{column.format('workspace')} IN ({', '.join('?' * len(workspaces))})"]
    args: list[object] = [*workspaces]
    if exposure is not None:
        clauses.append(f"{column.format('exposure')} = ?")
        args.append(exposure)
    if terms:
        matched: list[str] = []
        long = [t for t in terms if len(t) >= _TRIGRAM]
        if long:
            matched.append("rowid IN (SELECT rowid FROM records_fts WHERE records_fts MATCH ?)")
            args.append(" OR ".join(phrase(t) for t in long))
        for term in (t for t in terms if len(t) < _TRIGRAM):
            matched.append("instr(hay, ?) > 0")
            args.append(searchable(term))
        clauses.append(f"({' OR '.join(matched)})")
    return " AND ".join(clauses), args


def _hit(entity: Entity, workspace: str, log: str, place: int) -> Hit:
    label = entity.labels[0] if entity.labels else ""
    return Hit(workspace, log, entity.id, label, entity.text, entity.status, place)
