"""`self search`: the live records context does not render, matched by terms and ranked.

Pure and linear: one lowercase haystack per candidate, substring counts per term, one
integer score per record, two stable sorts. The SQLite FTS index serves large hosted
workspaces; this is the reference ranking it must agree with.
"""

from __future__ import annotations

from operator import itemgetter

from service.model.errors import Invalid
from service.model.state import CLOSED_EXECUTIONS, LIVE_STATUSES, Entity

Pair = tuple[Entity, bool]
MISSED = 1 << 42  # outweighs twice the occurrences any record's text can hold
_first = itemgetter(0)


def terms_of(query: str) -> list[str]:
    """Distinct lowercase terms, in the order typed."""
    return list(dict.fromkeys(query.lower().split()))


def candidates(entities: list[Pair], all_: bool, exposure: str | None) -> list[Pair]:
    """Live records at the asked exposure; by default only what context leaves out (search)."""
    if exposure is not None and exposure not in ("full", "index", "search"):
        raise Invalid(f"{{exposure}} {exposure!r} is not one of full, index, search", field="exposure")
    if exposure is None and all_:
        chosen = entities
    else:
        wanted = exposure or "search"
        chosen = [p for p in entities if p[0].exposure == wanted]
    live, closed = LIVE_STATUSES, CLOSED_EXECUTIONS
    return [p for p in chosen if p[0].status in live and p[0].execution not in closed]


def haystack(e: Entity) -> str:
    """The searchable text of a record: its text, labels and why, lowercased."""
    return f"{e.text}\n{' '.join(e.labels)}\n{e.why or ''}".lower()


def search(query: str, entities: list[Pair], all_: bool, exposure: str | None) -> list[Entity]:
    """Records matching `query` (any term, case-insensitive) among `(entity, is_current)`.

    Ranked: every term matched first, then more distinct terms, then more occurrences, then
    the current project, then the most recently created. An empty query lists every
    candidate, current project first, newest first.
    """
    pool = candidates(entities, all_, exposure)
    pool.sort(key=_recency, reverse=True)  # recency breaks every later tie (sorts are stable)
    terms = terms_of(query)
    if not terms:
        return [e for e, current in pool if current] + [e for e, current in pool if not current]
    hay = _haystacks(pool)
    # one integer per record, smaller first: terms missed, then more occurrences
    scores = [[-2 * c if (c := h.count(t)) else MISSED for h in hay] for t in terms]
    score = scores[0] if len(scores) == 1 else list(map(sum, zip(*scores, strict=True)))
    matched = len(terms) * MISSED
    ranked = [(k + (not p[1]), p[0]) for p, k in zip(pool, score, strict=True) if k < matched]
    ranked.sort(key=_first)
    return [e for _, e in ranked]


def _haystacks(pool: list[Pair]) -> list[str]:
    """Every candidate's haystack, lowered in one C call over the joined texts."""
    raw = [f"{e.text}\n{' '.join(e.labels)}\n{e.why or ''}" for e, _ in pool]
    hay = "\x00".join(raw).lower().split("\x00")
    if len(hay) != len(pool):  # a record held the separator (or none exist): one by one
        hay = [h.lower() for h in raw]
    return hay


def _recency(pair: Pair) -> str:
    return pair[0].created
