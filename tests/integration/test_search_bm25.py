"""The model's bm25 (`service/core/projections/search.py`) against SQLite FTS5's own `bm25()` on the
same texts, with the index's tokenizer: the same records match and every rank is the same
double, so the two orders agree, ties included."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from service.adapters.index.index import TOKENIZER
from service.adapters.index.query import phrase
from service.core.projections import search as model

# overlapping runs, the characters SQLite reads as U+FFFD, a letter Python lowers to two
ALPHABET = "ab c\x00\ufffe\uffff\ufffdéßİ\n"
texts = st.text(st.sampled_from(ALPHABET), max_size=24)


def fts5(hays: list[str], terms: list[str]) -> dict[int, float]:
    """Each matching row's `rank` from FTS5 over `hays` (row i + 1 is hays[i])."""
    db = sqlite3.connect(":memory:")
    try:
        db.execute(f"CREATE VIRTUAL TABLE f USING fts5(hay, tokenize = '{TOKENIZER}')")
        db.executemany("INSERT INTO f (rowid, hay) VALUES (?, ?)", list(enumerate(hays, 1)))
        query = " OR ".join(phrase(t) for t in terms)
        return dict(db.execute("SELECT rowid, rank FROM f WHERE f MATCH ?", [query]).fetchall())
    finally:
        db.close()


@settings(max_examples=300, deadline=None)
@given(records=st.lists(texts, min_size=1, max_size=30), query=st.lists(texts, min_size=1, max_size=3))
def test_the_models_bm25_is_fts5s_to_the_bit(records: list[str], query: list[str]) -> None:
    hays = [model.searchable(r.lower()) for r in records]
    terms = [t for t in model.terms_of(" ".join(query)) if len(t) >= model.TRIGRAM]
    if not terms:
        return
    corpus = model.Corpus(hays)
    weights = [(t, corpus.idf(t)) for t in terms]
    mine = {
        row: model.bm25(h, weights, corpus.total / corpus.rows)
        for row, h in enumerate(hays, 1)
        if any(t in h for t in terms)
    }
    assert fts5(hays, terms) == mine


def test_a_term_more_than_half_the_records_hold_weighs_one_millionth() -> None:
    hays = ["abc", "abcd", "xyz"]
    corpus = model.Corpus(hays)
    weights = [("abc", corpus.idf("abc"))]
    assert weights == [("abc", model.MIN_IDF)]
    avgdl = corpus.total / corpus.rows
    assert avgdl == 4 / 3
    assert fts5(hays, ["abc"]) == {
        1: model.bm25("abc", weights, avgdl),
        2: model.bm25("abcd", weights, avgdl),
    }
