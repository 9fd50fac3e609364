"""Search: the live records context does not render, matched and ranked."""

from __future__ import annotations

import random

from service.model import ids
from service.model.events import Assertion, EntityWhy, Event, Origin, Payload, make
from service.model.fold import fold_all
from service.model.search import search
from service.model.state import Entity, State

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


def test_rank_all_terms_then_more_matches_then_current_project_then_recency() -> None:
    here = Log("app")
    other = Log("web", base=1_900_000_000_000)  # newer ids than anything in `here`
    here.entity("merge logs", "idea")
    here.entity("merge merge merge", "idea")
    here.entity("sync logs by merge", "idea")
    other.entity("merge and sync logs", "idea")
    here.entity("sync only", "idea")
    entities = pool((here.state(), True), (other.state(), False))
    assert texts(search("merge sync logs", entities, False, None)) == [
        "sync logs by merge",  # all terms, current project
        "merge and sync logs",  # all terms, other project
        "merge logs",  # two terms
        "merge merge merge",  # one term, three matches
        "sync only",  # one term, one match
    ]


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
    hits = [len(terms & set(e.text.split())) for e in found]
    expected = {e.id for e, _ in entities if e.exposure == "search" and terms & set(e.text.split())}
    assert {e.id for e in found} == expected
    assert 2 in hits and hits == sorted(hits, reverse=True)  # both terms first
