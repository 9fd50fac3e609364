"""Search: the live records context does not render, matched and ranked."""

from __future__ import annotations

import math
import random

from service.core.events import ids
from service.core.events.events import Assertion, EntityWhy, Event, Origin, Payload, make
from service.core.fold.fold import fold_all
from service.core.fold.state import Entity, State
from service.core.projections.search import Corpus, bm25, haystack, occurrences, search, tokens

HUMAN = Origin("human", True)


class Log:
    def __init__(self, project: str = "app", base: int = 1_800_000_000_000) -> None:
        self.project = project
        self.base = base
        self.events: list[Event] = []

    def add(self, kind: str, payload: Payload) -> str:
        n = len(self.events) + 1
        eid = ids.encode((self.base + 2000 * n) << 80 | n)
        self.events.append(make(eid, "2026-11-30T10:00:00.000Z", kind, HUMAN, self.project, payload))
        return eid

    def entity(self, text: str, *labels: str, **kw: object) -> str:
        eid = ids.encode((self.base + 2000 * (len(self.events) + 1)) << 80 | 1)
        self.add("entity.confirmed", Assertion(entity=eid, text=text, labels=labels, **kw))  # type: ignore[arg-type]
        return eid

    def state(self) -> State:
        return fold_all(self.events)


def pool(*states: tuple[State, bool]) -> list[tuple[Entity, bool]]:
    return [(e, current) for state, current in states for e in state.entities.values()]


def texts(found: list[Entity]) -> list[str]:
    return [e.text for e in found]


def test_default_is_live_search_exposure_only() -> None:
    log = Log()
    log.entity("cache the fold", "idea")
    log.entity("cache decision", "decision", exposure="index")
    log.entity("cache rule", "convention", exposure="full")
    gone = log.entity("cache retracted", "idea")
    log.add("entity.retracted", EntityWhy(entity=gone))
    entities = pool((log.state(), True))
    assert texts(search("cache", entities, False, None)) == ["cache the fold"]
    assert set(texts(search("cache", entities, True, None))) == {
        "cache the fold",
        "cache decision",
        "cache rule",
    }
    assert texts(search("cache", entities, False, "index")) == ["cache decision"]
    assert texts(search("cache", entities, True, "full")) == ["cache rule"]


def test_matches_text_labels_and_why_case_insensitively() -> None:
    log = Log()
    log.entity("Use SQLite", "idea")
    log.entity("something else", "Storage")
    log.entity("third", "idea", why="because SQLITE is small")
    log.entity("unrelated", "idea")
    entities = pool((log.state(), True))
    assert set(texts(search("sqlite", entities, False, None))) == {"Use SQLite", "third"}
    assert texts(search("STORAGE", entities, False, None)) == ["something else"]


def test_rank_the_current_project_first_then_bm25() -> None:
    here = Log("app")
    other = Log("web", base=1_900_000_000_000)  # newer ids than anything in `here`
    here.entity("merge logs", "idea")
    here.entity("merge merge merge", "idea")
    here.entity("sync logs by merge", "idea")
    other.entity("merge and sync logs", "idea")
    here.entity("sync only", "idea")
    for n in range(4):  # so no term is in half the records (idf's floor)
        here.entity(f"unrelated words {n}", "idea")
    entities = pool((here.state(), True), (other.state(), False))
    assert texts(search("merge sync logs", entities, False, None)) == [
        "sync logs by merge",  # every term
        "merge logs",  # two terms, shorter than
        "sync only",  # one term, the rarer one, shorter than
        "merge merge merge",  # one term three times
        "merge and sync logs",  # another project: after every one of the current project's
    ]
    assert texts(search("merge", entities, False, None))[:2] == ["merge merge merge", "merge logs"]


def test_bm25_is_fts5s_formula_over_trigrams() -> None:
    """k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6, sizes in
    trigrams, overlapping occurrences counted (FTS5's phrase instances)."""
    assert (tokens(""), tokens("ab"), tokens("abc"), tokens("abcd")) == (0, 0, 1, 2)
    assert (occurrences("aaaa", "aaa"), occurrences("abab ab", "ab"), occurrences("xyz", "y")) == (2, 3, 1)
    corpus = Corpus(["aaaa", "bbbbbb", "cccccccc", "abc"])
    assert (corpus.rows, corpus.total) == (4, 2 + 4 + 6 + 1)
    assert corpus.idf("aaa") == math.log(3.5 / 1.5)
    assert Corpus(["abc", "abcd"]).idf("abc") == 1e-6  # every record holds it
    avgdl = corpus.total / corpus.rows
    idf = corpus.idf("aaa")
    expected = idf * (2 * 2.2) / (2 + 1.2 * (0.25 + 0.75 * 2 / avgdl))
    assert bm25("aaaa", [("aaa", idf)], avgdl) == -expected


def test_a_word_under_three_characters_finds_but_does_not_rank() -> None:
    log = Log()
    log.entity("a deploy of the index", "idea")
    log.entity("xy only", "idea")
    log.entity("deploy", "idea")
    entities = pool((log.state(), True))
    # the records holding `deploy` by its rank; the one found by `xy` alone after them
    assert texts(search("xy deploy", entities, False, None)) == ["deploy", "a deploy of the index", "xy only"]
    assert texts(search("xy", entities, False, None)) == ["xy only"]


def test_characters_sqlite_reads_as_the_replacement_character_match_it() -> None:
    log = Log()
    log.entity("nul\x00here", "idea")
    log.entity("max\uffffhere", "idea")
    entities = pool((log.state(), True))
    assert texts(search("l\ufffdh", entities, False, None)) == ["nul\x00here"]
    assert texts(search("x\ufffeh", entities, False, None)) == ["max\uffffhere"]


def test_empty_query_lists_candidates_current_first_newest_first() -> None:
    here, other = Log("app"), Log("web", base=1_900_000_000_000)
    here.entity("old", "idea")
    here.entity("new", "idea")
    other.entity("elsewhere", "idea")
    entities = pool((here.state(), True), (other.state(), False))
    assert texts(search("  ", entities, False, None)) == ["new", "old", "elsewhere"]


def test_search_of_10k_entities_finds_only_matching_search_exposure_records() -> None:
    rng = random.Random(3)
    words = ["merge", "sync", "cache", "fold", "log", "state", "index", "query", "team", "git"]
    template = Log()
    template.entity("x", "idea")
    proto = template.state().entities[next(iter(template.state().entities))]
    entities: list[tuple[Entity, bool]] = []
    for n in range(10_000):
        text = " ".join(rng.choices(words, k=8))
        e = Entity(
            **{
                **{f: getattr(proto, f) for f in proto.__struct_fields__},
                "id": f"{n:026d}",
                "text": text,
                "created": f"{n:026d}",
                "exposure": "search" if n % 2 else "index",
            }
        )
        entities.append((e, n % 3 == 0))
    found = search("merge cache", entities, False, None)
    terms = {"merge", "cache"}
    expected = {e.id for e, _ in entities if e.exposure == "search" and terms & set(e.text.split())}
    assert {e.id for e in found} == expected
    corpus = Corpus([haystack(e) for e, _ in entities])
    weights = [(t, corpus.idf(t)) for t in ("merge", "cache")]
    current = {e.id for e, here in entities if here}
    keys = [(e.id not in current, bm25(haystack(e), weights, corpus.total / corpus.rows)) for e in found]
    assert keys == sorted(keys)  # the current project first, then by rank
