"""Searching the index: FTS5 finds the records and ranks them with `bm25()`, in SQLite.

Each workspace's FTS5 table holds its live records, so FTS5's statistics are the
workspace's and its `rank` is `service/core/projections/search.py`'s bm25, the one ranking `self
search` uses too. A record's key (its rowid) is its log, its exposure and its place in the
fold (`key`), so the records of one project, and of one project at one exposure, are each a
range that FTS5 seeks in its lists. Per workspace: FTS5 counts the matches (the exposure read
off each key); the named project's range gives its first `limit` (`ORDER BY rank, created
DESC, log, seq LIMIT n`); only when those are fewer are the other matches ranked (the
project comes first, so they could not be shown otherwise). Across workspaces the firsts of each are merged
on the same keys; only the records answered with are decoded; it all reads one snapshot.

A user's query never reaches FTS5's query language: every term is one quoted phrase (a `"`
doubled inside), so `"`, `*`, `-`, `NEAR`, `AND`, `OR` and parentheses are plain characters.
A term shorter than three characters has no trigram: FTS5 cannot find it, so `instr` finds
it and it ranks nothing (the model's rule), a record found by such terms alone ranking 0.

Short ids are the shortest unique prefixes among every match (what `self search` prints),
found without reading every match: only a match sharing an answered id's first
`SHORT_MINIMUM` bytes can lengthen its short id, and only the nearest such match on either
side in id order does, so each answered id walks the workspace's id index outward to the
first match on each side, among the few ids sharing that prefix (ids made in one burst can be
many: past `WALK` of them, every match's id is read, as before).
"""

from __future__ import annotations

import msgspec
import sqlite_utils

from service.adapters.index.errors import BadLimit, QueryTooLong
from service.core.events.events import EXPOSURES  # codes 0, 1, 2 of a key, in their order; any other is 3
from service.core.fold.state import Entity
from service.core.projections import search as ranking
from service.core.projections.render import SHORT_MINIMUM, short_ids

MAX_QUERY = 1000  # characters of a query
MAX_TERMS = 32  # distinct terms of a query
MAX_LIMIT = 200  # results of one search
DEFAULT_LIMIT = 20
COMMON = 20_000  # matches at one exposure past which they are counted log by log (`_Match.count`)
HIDDEN_CAP = 1_000  # matches at the other exposures counted at most (`Page.hidden`)
WALK = 256  # ids read on one side of an answered id before every match's id is read instead
MAX_LOG = (1 << 24) - 1  # logs of a workspace
_LOG_BITS, _EXPOSURE_BITS = 34, 32
_EXPOSED = f"((rowid >> {_EXPOSURE_BITS}) & 3) = :code"  # a key's exposure is `code`
_decode = msgspec.msgpack.Decoder(Entity).decode
Span = tuple[int, int]
Row = tuple[int, float, str, str, int]  # key, rank, created, log, seq
WHOLE: Span = (0, ((MAX_LOG + 1) << _LOG_BITS) - 1)


def key(exposure: str, log: int, seq: int) -> int:
    """A record's key (its rowid, in its records table and in FTS5): its log's number, its
    exposure's code and its place in the fold, so the records of one log, and of one log at
    one exposure, are each one range of keys that FTS5 seeks in its lists (and a log indexed
    anew is written at the end of the tables)."""
    return log << _LOG_BITS | code(exposure) << _EXPOSURE_BITS | seq


def code(exposure: str) -> int:
    return EXPOSURES.index(exposure) if exposure in EXPOSURES else len(EXPOSURES)


def span(log: int, exposure: str | None = None) -> Span:
    """The keys of one log's records, or of those at one exposure."""
    if exposure is None:
        return log << _LOG_BITS, ((log + 1) << _LOG_BITS) - 1
    base = log << _LOG_BITS | code(exposure) << _EXPOSURE_BITS
    return base, base + (1 << _EXPOSURE_BITS) - 1


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


def decode_entity(blob: bytes) -> Entity:
    return _decode(blob)


def phrase(term: str) -> str:
    """`term` as one FTS5 string: a phrase whatever characters it holds."""
    return '"' + term.replace('"', '""') + '"'


class Found(msgspec.Struct, frozen=True, gc=False):
    """One ranked record with the workspace and log (`""`: the workspace's own) holding it."""

    workspace: str
    log: str
    entity: Entity


class Page(msgspec.Struct, frozen=True):
    """One answer's worth of a search: how many records match, the first of them with their
    records, and the short id of each of those among every match."""

    matched: int
    top: list[Found]
    shorts: dict[str, str]
    hidden: int = 0  # matches at the other exposures, left out (`page(hidden=True)`), up to HIDDEN_CAP


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


def search(
    db: sqlite_utils.Database,
    tables: dict[str, str],
    q: str,
    project: str | None,
    limit: int,
    exposure: str | None,
) -> list[Hit]:
    found = page(db, tables, q, project, exposure, limit).top
    return [_hit(f.entity, f.workspace, f.log, place) for place, f in enumerate(found, 1)]


class _Match:
    """One query over one workspace's tables: the SQL of its matches and their rank, over a
    range of keys."""

    def __init__(self, table: str, terms: list[str], exposure: str | None) -> None:
        self.table, self.terms, self.exposure = table, terms, exposure
        long = [t for t in terms if len(t) >= ranking.TRIGRAM]
        short = [t for t in terms if len(t) < ranking.TRIGRAM]
        self.fts = fts = f"[{table}_fts]"
        self.args: dict[str, object] = {}
        self.with_ = ""
        self.driven = bool(long) and not short
        if self.driven:  # FTS5 drives: only its matches are read, the range sought in its lists
            self.source = f"{fts} m JOIN [{table}] r ON r.key = m.rowid"
            self.rank = "m.rank"
            self.key = "m.rowid"
            self.where = [f"{fts} MATCH :q"]
            self.args["q"] = " OR ".join(phrase(t) for t in long)
        else:  # a short term: every record is read (instr), FTS5 ranks those holding a long one
            self.source = f"[{table}] r"
            self.rank = "0.0"
            self.key = "r.key"
            self.where = []
            if long:  # FTS5's matches once, not a MATCH per record
                self.with_ = f"WITH m AS MATERIALIZED (SELECT rowid, rank FROM {fts} WHERE {fts} MATCH :q) "
                self.source += " LEFT JOIN m ON m.rowid = r.key"
                self.rank = "coalesce(m.rank, 0.0)"
                self.args["q"] = " OR ".join(phrase(t) for t in long)
            found = ["m.rowid IS NOT NULL"] if long else []
            found += [f"instr(r.hay, :s{n}) > 0" for n in range(len(short))]
            self.args |= {f"s{n}": term for n, term in enumerate(short)}
            if found:
                self.where.append(f"({' OR '.join(found)})")
        self.exposed = f"(({self.key} >> {_EXPOSURE_BITS}) & 3) = :code"  # the key's exposure
        if exposure is not None:
            self.where.append(self.exposed)
            self.args["code"] = code(exposure)

    def sql(self, select: str, skip: int = 0, tail: str = "") -> str:
        where = [*self.where, f"{self.key} BETWEEN :lo AND :hi"]
        where += [f"NOT ({self.key} BETWEEN :lo{n} AND :hi{n})" for n in range(skip)]
        return f"{self.with_}SELECT {select} FROM {self.source} WHERE {' AND '.join(where)}{tail}"

    def count(self, db: sqlite_utils.Database, workspace: str) -> int:
        """How many records match: FTS5 alone when it drives (its lists, never the records).
        At one exposure, matches are counted filtering their keys up to COMMON of them, then
        in one range of keys per log, which FTS5 seeks: the filter costs each match (42 ms
        over 495,014, against 12 ms for the ranges), a range each log (25 ms over 101 logs
        for a term of two words, against 3 ms for the filter)."""
        bounds = {"lo": WHOLE[0], "hi": WHOLE[1]}
        if not self.driven:
            return int(db.execute(self.sql("count(*)"), self.args | bounds).fetchone()[0])
        sql = f"SELECT count(*) FROM {self.fts} WHERE {self.fts} MATCH :q"
        if self.exposure is None:
            return int(db.execute(sql, self.args).fetchone()[0])
        exposed = f"SELECT 1 FROM {self.fts} WHERE {self.fts} MATCH :q AND {_EXPOSED}"
        few = int(db.execute(f"SELECT count(*) FROM ({exposed} LIMIT {COMMON})", self.args).fetchone()[0])
        if few < COMMON:
            return few
        sql += " AND rowid BETWEEN :lo AND :hi"
        total = 0
        for n in _numbers(db, workspace):
            lo, hi = span(n, self.exposure)
            total += db.execute(sql, self.args | {"lo": lo, "hi": hi}).fetchone()[0]
        return total

    def elsewhere(self, db: sqlite_utils.Database, cap: int) -> int:
        """How many matches are at another exposure than this one's, counted up to `cap`: a
        broad query stops there (2 to 7 ms over 30,000 matches; counting every one cost 17)."""
        if self.driven:  # FTS5's lists alone, as `count`
            sql = f"SELECT 1 FROM {self.fts} WHERE {self.fts} MATCH :q AND NOT {_EXPOSED}"
        else:
            found = [w for w in self.where if w != self.exposed]
            where = " AND ".join([*found, f"NOT {self.exposed}"])
            sql = f"{self.with_}SELECT 1 FROM {self.source} WHERE {where}"
        counted = f"SELECT count(*) FROM ({sql} LIMIT {cap})"
        return int(db.execute(counted, self.args).fetchone()[0])

    def first(self, db: sqlite_utils.Database, span: Span, limit: int, skip: list[Span]) -> list[Row]:
        """The first `limit` matches of keys in `span` and in none of `skip`, in the model's
        order within one group of project: by rank, the newest first, then the fold's order."""
        order = f" ORDER BY {self.rank}, r.created DESC, r.log, r.seq LIMIT :limit"
        sql = self.sql(f"r.key, {self.rank}, r.created, r.log, r.seq", len(skip), order)
        bounds: dict[str, object] = {"lo": span[0], "hi": span[1], "limit": limit}
        for n, (lo, hi) in enumerate(skip):
            bounds |= {f"lo{n}": lo, f"hi{n}": hi}
        return [tuple(row) for row in db.execute(sql, self.args | bounds).fetchall()]

    def holds(self, exposure: str, hay: str) -> bool:
        """Whether a record of this exposure and haystack is a match (what the SQL finds)."""
        if self.exposure is not None and exposure != self.exposure:
            return False
        return not self.terms or any(t in hay for t in self.terms)


def page(
    db: sqlite_utils.Database,
    tables: dict[str, str],
    q: str,
    project: str | None,
    exposure: str | None,
    limit: int,
    hidden: bool = False,
) -> Page:
    """The matches of `q` in `tables` (workspace → its records table): how many, the first
    `limit` in the model's order with their records, and their short ids; `hidden`: also how
    many match at every other exposure (`search.hidden`: what context shows, left out), up to
    HIDDEN_CAP.

    Per workspace: the named project's first `limit` (its keys' ranges: FTS5 ranks only its
    matches), then, only when they are fewer, the first of the others; merged across
    workspaces on the same keys."""
    check_limit(limit)
    terms = check_query(q)
    if exposure is not None and exposure not in EXPOSURES:
        return Page(0, [], {})  # no record is at an exposure that is not one
    matches = {workspace: _Match(table, terms, exposure) for workspace, table in tables.items()}
    keyed: list[tuple[tuple[bool, float], str, str, int, str, int]] = []
    matched = 0
    for workspace, match in matches.items():
        count = match.count(db, workspace)
        matched += count
        if not count:
            continue
        n = None if project is None else _number(db, workspace, project)
        spans = [] if n is None else [span(n, exposure)]
        mine = [row for part in spans for row in match.first(db, part, limit, [])]
        rest = match.first(db, WHOLE, limit - len(mine), spans) if len(mine) < limit else []
        keyed += [((False, r), at, workspace, k, log, seq) for k, r, at, log, seq in mine]
        keyed += [((True, r), at, workspace, k, log, seq) for k, r, at, log, seq in rest]
    keyed.sort(key=lambda k: (k[2], k[4], k[5]))  # the pool's order: workspace, log, fold
    keyed.sort(key=lambda k: k[1], reverse=True)  # newest first (stable)
    keyed.sort(key=lambda k: k[0])  # the named project first, then by rank (stable)
    top = [_found(db, tables[k[2]], k[2], k[3]) for k in keyed[:limit]]
    left_out = 0
    if hidden and exposure is not None:
        left_out = min(HIDDEN_CAP, sum(m.elsewhere(db, HIDDEN_CAP) for m in matches.values()))
    return Page(matched, top, _shorts(db, matches, [f.entity.id for f in top]), left_out)


def _numbers(db: sqlite_utils.Database, workspace: str) -> list[int]:
    """The numbers of `workspace`'s logs."""
    return [int(row[0]) for row in db.execute("SELECT n FROM logs WHERE workspace = ?", [workspace])]


def _number(db: sqlite_utils.Database, workspace: str, log: str) -> int | None:
    row = db.execute("SELECT n FROM logs WHERE workspace = ? AND log = ?", [workspace, log]).fetchone()
    return None if row is None else int(row[0])


def _found(db: sqlite_utils.Database, table: str, workspace: str, rowid: int) -> Found:
    """One answered record, by its key."""
    log, blob = db.execute(f"SELECT log, entity FROM [{table}] WHERE key = ?", [rowid]).fetchone()
    return Found(workspace, log, _decode(blob))


def _shorts(db: sqlite_utils.Database, matches: dict[str, _Match], wanted: list[str]) -> dict[str, str]:
    """Each of `wanted` (ids of matches) with its shortest unique prefix among every match of
    `matches`: `short_ids` over the wanted ids and the nearest match on either side of each,
    which decide it; every match's id when a walk runs long (ids made in one burst)."""
    near = set(wanted)
    for wanted_id in wanted:
        for match in matches.values():
            for side in ("<", ">"):
                found = _nearest(db, match, wanted_id, side)
                if found is None:
                    return _every(db, matches, wanted)
                near.update(found)
    shorts = short_ids(near)
    return {i: shorts[i] for i in wanted}


def _nearest(db: sqlite_utils.Database, match: _Match, wanted_id: str, side: str) -> list[str] | None:
    """The id of the match nearest `wanted_id` on one side in id order (`<` or `>`), [] when
    none shares its first SHORT_MINIMUM bytes, None when more than WALK ids do."""
    way = "DESC" if side == "<" else ""
    rows = db.conn.execute(
        f"SELECT id, exposure, hay FROM [{match.table}] WHERE id {side} ? ORDER BY id {way} LIMIT ?",
        [wanted_id, WALK + 1],
    )  # the id index, walked from `wanted_id`: read only as far as needed
    head = wanted_id.encode()[:SHORT_MINIMUM]
    try:
        for walked, (record_id, exposure, hay) in enumerate(rows):
            if record_id.encode()[:SHORT_MINIMUM] != head:
                return []
            if walked == WALK:
                return None
            if match.holds(exposure, hay):
                return [record_id]
        return []
    finally:
        rows.close()


def _every(db: sqlite_utils.Database, matches: dict[str, _Match], wanted: list[str]) -> dict[str, str]:
    ids: list[str] = []
    for match in matches.values():
        bounds = {"lo": WHOLE[0], "hi": WHOLE[1]}
        ids += [row[0] for row in db.execute(match.sql("r.id"), match.args | bounds)]
    shorts = short_ids(ids)
    return {i: shorts[i] for i in wanted}


def _hit(entity: Entity, workspace: str, log: str, place: int) -> Hit:
    label = entity.labels[0] if entity.labels else ""
    return Hit(workspace, log, entity.id, label, entity.text, entity.status, place)
