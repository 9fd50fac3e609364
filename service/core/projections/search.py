"""`self search`: the live records context does not render, matched by terms and ranked by bm25.

The one ranking of search, the CLI's and the team service's: SQLite FTS5's `bm25()` over its
trigram tokenizer, computed here on the same tokens with the same statistics, so `self
search` (no SQLite) and the service's index (`service/adapters/index/`, FTS5 itself) give the same
order (`tests/integration/test_search_service.py` holds them to it).

- A record's searchable text is its `haystack`: text, labels and why, lowercased, with the
  characters SQLite reads as U+FFFD (NUL, U+FFFE, U+FFFF) written as U+FFFD.
- A record matches when its haystack holds any term (distinct words of the query,
  lowercased) as a substring.
- Its tokens are every run of three characters (FTS5's trigram tokenizer): a haystack of n
  characters has max(n - 2, 0). A term of three characters or more is a phrase of those
  tokens; it occurs wherever it is a substring, overlapping occurrences counted.
- The statistics are those of the workspace's corpus, every live record of every log at
  every exposure (what its FTS5 table holds): N records, their average token count, and per
  term the number of records holding it.
- Score (FTS5's, k1 = 1.2, b = 0.75): per term, in the query's order, idf × f × (k1 + 1) /
  (f + k1 × (1 − b + b × D / avgdl)), with idf = ln((N − n + 0.5) / (n + 0.5)), or 1e-6 when
  that is not positive; the rank is the sum negated (smaller is better), as FTS5's `rank`.
  A term under three characters has no trigram: it finds records but adds nothing to a rank
  (a record found by such terms alone ranks 0, after every other).
- Order: the current project's records first, then by rank, then the newest created, then
  the order of the pool (log by log, each in the fold's order). An empty query lists every
  candidate, current project first, newest first.
- Hidden: the default search (no `all`, no exposure) also counts the live records matching
  that it left out because context shows them, so an answer of none can say where to look.

The arithmetic is FTS5's, operation for operation (`fts5_aux.c: fts5Bm25Function`), so the
two compute the same doubles and break ties alike.

`tests/integration/test_search_bm25.py` holds this score to FTS5's to the bit on random texts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from operator import itemgetter

from service.core.errors import Invalid
from service.core.events.events import EXPOSURES
from service.core.fold.state import CLOSED_EXECUTIONS, LIVE_STATUSES, Entity

Pair = tuple[Entity, bool]
K1 = 1.2
B = 0.75
TRIGRAM = 3  # characters of a token; a shorter term has none
MIN_IDF = 1e-6  # FTS5's idf for a term more than half the records hold
_READ_AS_REPLACEMENT = str.maketrans({0: 0xFFFD, 0xFFFE: 0xFFFD, 0xFFFF: 0xFFFD})
_first = itemgetter(0)


def searchable(text: str) -> str:
    """`text` as SQLite's UTF-8 reader hands it to a tokenizer: NUL (where SQLite's string
    functions stop), U+FFFE and U+FFFF read as U+FFFD."""
    if "\x00" in text or "\ufffe" in text or "\uffff" in text:
        return text.translate(_READ_AS_REPLACEMENT)
    return text


def terms_of(query: str) -> list[str]:
    """Distinct lowercase terms, in the order typed, as they are searched for."""
    return list(dict.fromkeys(searchable(query.lower()).split()))


def candidates(entities: list[Pair], all_: bool, exposure: str | None) -> list[Pair]:
    """Live records at the asked exposure; by default only what context leaves out (search)."""
    if exposure is not None and exposure not in EXPOSURES:
        raise Invalid(f"{{exposure}} {exposure!r} is not one of {', '.join(EXPOSURES)}", field="exposure")
    if exposure is None and all_:
        chosen = entities
    else:
        wanted = exposure or "search"
        chosen = [p for p in entities if p[0].exposure == wanted]
    live, closed = LIVE_STATUSES, CLOSED_EXECUTIONS
    return [p for p in chosen if p[0].status in live and p[0].execution not in closed]


def haystack(e: Entity) -> str:
    """The searchable text of a record: its text, labels and why, lowercased."""
    return searchable(f"{e.text}\n{' '.join(e.labels)}\n{e.why or ''}".lower())


def tokens(hay: str) -> int:
    """How many trigram tokens a haystack holds (FTS5's size of its row)."""
    return len(hay) - 2 if len(hay) > 2 else 0


def occurrences(hay: str, term: str) -> int:
    """How many times `term` occurs in `hay`, overlapping occurrences counted (each position
    where the phrase of its trigrams starts)."""
    if not _overlaps(term):
        return hay.count(term)  # no occurrence can overlap another: the same count
    found, at = 0, hay.find(term)
    while at >= 0:
        found += 1
        at = hay.find(term, at + 1)
    return found


def _overlaps(term: str) -> bool:
    """Whether two occurrences of `term` can overlap: a proper prefix is also a suffix."""
    return any(term[:k] == term[-k:] for k in range(1, len(term)))


class Corpus:
    """The statistics bm25 reads: the number of records and their average size in tokens,
    and per term the number of records holding it."""

    def __init__(self, hays: Sequence[str]) -> None:
        self.hays = hays
        self.rows = len(hays)
        short = sum(2 - len(h) for h in hays if len(h) < 2)  # none in a haystack: two newlines
        self.total = sum(map(len, hays)) - 2 * self.rows + short

    def idf(self, term: str) -> float:
        held = sum(1 for h in self.hays if term in h)
        idf = math.log((self.rows - held + 0.5) / (held + 0.5))
        return idf if idf > 0.0 else MIN_IDF


def bm25(hay: str, weights: list[tuple[str, float]], avgdl: float) -> float:
    """A haystack's rank for the ranked terms (`(term, idf)` in the query's order): FTS5's
    `bm25()` to the last bit, negated (smaller is better)."""
    size = float(tokens(hay))
    score = 0.0
    for term, idf in weights:
        freq = float(occurrences(hay, term))
        score += idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * size / avgdl)))
    return -1.0 * score


def search(query: str, entities: list[Pair], all_: bool, exposure: str | None) -> list[Entity]:
    """Records matching `query` (any term, case-insensitive) among `(entity, is_current)`,
    the corpus being every live one of them; ranked as the module says."""
    pool = candidates(entities, all_, exposure)
    pool.sort(key=_recency, reverse=True)  # recency breaks every later tie (sorts are stable)
    terms = terms_of(query)
    if not terms:
        return [e for e, current in pool if current] + [e for e, current in pool if not current]
    hay = _haystacks(pool)
    matched = [(p, h) for p, h in zip(pool, hay, strict=True) if any(t in h for t in terms)]
    ranked_terms = [t for t in terms if len(t) >= TRIGRAM]
    if ranked_terms and matched:
        stats = Corpus(hay + _haystacks(_others(entities, all_, exposure)))
        weights = [(t, stats.idf(t)) for t in ranked_terms]
        avgdl = stats.total / stats.rows
        keyed = [((not p[1], bm25(h, weights, avgdl)), p[0]) for p, h in matched]
    else:
        keyed = [((not p[1], 0.0), p[0]) for p, _ in matched]
    keyed.sort(key=_first)
    return [e for _, e in keyed]


def hidden(query: str, entities: list[Pair], all_: bool, exposure: str | None) -> int:
    """How many live records match `query` (every one, for an empty query) but are left out
    because context shows them: the default search's, without `all_` or an exposure (0 with
    either: the asker chose what to see)."""
    if all_ or exposure is not None:
        return 0
    shown = _others(entities, all_, exposure)
    terms = terms_of(query)
    if not terms:
        return len(shown)
    return sum(1 for h in _haystacks(shown) if any(t in h for t in terms))


def _others(entities: list[Pair], all_: bool, exposure: str | None) -> list[Pair]:
    """The live records `candidates` leaves out (at another exposure): with the candidates,
    the corpus."""
    if exposure is None and all_:
        return []
    wanted = exposure or "search"
    return [p for p in entities if p[0].exposure != wanted and p[0].live]


def _haystacks(pool: list[Pair]) -> list[str]:
    """Every record's haystack, lowered in one C call over the joined texts."""
    raw = [f"{e.text}\n{' '.join(e.labels)}\n{e.why or ''}" for e, _ in pool]
    joined = "\x01".join(raw).lower()
    if "\x00" in joined or "\ufffe" in joined or "\uffff" in joined:
        joined = searchable(joined)
    hay = joined.split("\x01")
    if len(hay) != len(pool):  # a record held the separator (or none exist): one by one
        hay = [searchable(h.lower()) for h in raw]
    return hay


def _recency(pair: Pair) -> str:
    return pair[0].created
