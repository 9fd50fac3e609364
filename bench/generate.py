"""Generate a realistic project log: mixed kinds, supersessions, retractions, placements, reports.

Used by the benchmarks (and usable by hand): `python bench/generate.py STORE SLUG N`.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the package, not bench/service.py

from service.adapters.store import Store
from service.core.events import ids
from service.core.events.events import (
    Assertion,
    Blocked,
    Covered,
    EntityWhy,
    Event,
    Link,
    Origin,
    Placed,
    ProjectAdded,
    ReportAdded,
    make,
)

FULL_ROWS, INDEX_ROWS = 40, 560  # under what the default caps hold (1,000 and 12,000 tokens)
LABELS = [
    ("decision", "index", 40),
    ("convention", "full", 30),
    ("idea", "search", None),
    ("note", "index", 45),
    ("milestone", "index", 20),
    ("work", "search", None),
]
WORDS = [
    "sync",
    "merge",
    "cache",
    "fold",
    "segment",
    "clone",
    "remote",
    "index",
    "search",
    "budget",
    "token",
    "cap",
    "review",
    "claim",
    "ground",
    "support",
    "schema",
    "event",
    "ledger",
    "context",
    "agent",
]


def events_for(slug: str, count: int, seed: int = 7, start_ms: int = 1_780_000_000_000) -> list[Event]:
    """`count` events for project `slug`, deterministic for a seed."""
    rng = random.Random(seed)
    origin = Origin("agent", True)
    last: str | None = None
    out: list[Event] = []
    live: list[str] = []
    work: list[str] = []
    with_criteria: list[str] = []
    tiers: dict[str, list[str]] = {"full": [], "index": []}

    def next_event(kind: str, payload: object, refs: dict[str, object] | None = None) -> Event:
        nonlocal last
        ms = start_ms + len(out) * 10
        last = ids.next_id(last, ms, rng.getrandbits(80))
        ts = f"2026-06-01T00:00:{(len(out) % 60):02d}.000Z"
        return make(last, ts, kind, origin, slug, payload, refs)  # type: ignore[arg-type]

    while len(out) < count:
        roll = rng.random()
        if roll < 0.40 or len(live) < 10:
            label, exposure, priority = rng.choice(LABELS)
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12)))
            criteria = ("tests pass", "docs written") if label == "milestone" else ()
            links: tuple[Link, ...] = ()
            if live and rng.random() < 0.15:
                replaced = live.pop(rng.randrange(len(live)))
                _leave(tiers, replaced)
                links = (Link("supersedes", replaced),)
            event = next_event(
                "entity.confirmed",
                Assertion(
                    entity="",
                    text=text,
                    labels=(label,),
                    links=links,
                    criteria=criteria,
                    exposure=exposure,
                    priority=priority,
                    why="because " + rng.choice(WORDS),
                ),
            )
            event = _with_entity(event)
            out.append(event)
            if exposure in tiers:
                tiers[exposure].append(event.id)
                out.extend(_demote(tiers, next_event))
            (work if label == "work" else live).append(event.id)
            if criteria:
                with_criteria.append(event.id)
        elif roll < 0.50:
            retracted = live.pop(rng.randrange(len(live)))
            _leave(tiers, retracted)
            out.append(next_event("entity.retracted", EntityWhy(retracted, "dropped")))
        elif roll < 0.62:
            placed, exposure = rng.choice(live), rng.choice(["index", "search"])
            out.append(next_event("entity.placed", Placed(placed, exposure=exposure, why="decayed")))
            _leave(tiers, placed)
            if exposure == "index":
                tiers["index"].append(placed)
                out.extend(_demote(tiers, next_event))
        elif roll < 0.72 and work:
            out.append(next_event("entity.started", EntityWhy(rng.choice(work))))
        elif roll < 0.80 and work:
            unit = rng.choice(work)
            out.append(
                next_event(
                    "report.added",
                    ReportAdded(
                        "progress " + rng.choice(WORDS),
                        work=unit,
                        commit=f"{rng.getrandbits(160):040x}",
                    ),
                    {"work": unit},
                )
            )
        elif roll < 0.86 and work:
            unit = work.pop(rng.randrange(len(work)))
            out.append(
                next_event(
                    "report.added",
                    ReportAdded("done: tests green", work=unit, artifact="dist/report.html"),
                    {"work": unit},
                )
            )
            out.append(next_event("entity.done", EntityWhy(unit)))
        elif roll < 0.90 and work:
            out.append(next_event("entity.blocked", Blocked(rng.choice(work), on="review")))
        elif roll < 0.94 and with_criteria:
            out.append(next_event("entity.covered", Covered(rng.choice(with_criteria), "tests pass")))
        else:
            out.append(next_event("entity.linked", EntityWhy(rng.choice(live)) and _link(live, rng)))
    return out[:count]


def _leave(tiers: dict[str, list[str]], entity: str) -> None:
    """`entity` no longer renders at full or index exposure (retracted, replaced, placed)."""
    for members in tiers.values():
        if entity in members:
            members.remove(entity)


def _demote(tiers: dict[str, list[str]], next_event: object) -> list[Event]:
    """Keep the rendered tiers within what the caps would allow, as a real team must."""
    moved: list[Event] = []
    if len(tiers["full"]) > FULL_ROWS:
        oldest = tiers["full"].pop(0)
        moved.append(next_event("entity.placed", Placed(oldest, exposure="index", why="room")))  # type: ignore[operator]
        tiers["index"].append(oldest)
    if len(tiers["index"]) > INDEX_ROWS:
        oldest = tiers["index"].pop(0)
        moved.append(next_event("entity.placed", Placed(oldest, exposure="search", why="room")))  # type: ignore[operator]
    return moved


def _with_entity(event: Event) -> Event:
    """An assertion names its own event id as the new entity's id."""
    import msgspec

    data = msgspec.json.decode(event.payload)
    data["entity"] = event.id
    return msgspec.structs.replace(event, payload=msgspec.Raw(msgspec.json.encode(data, order="sorted")))


def _link(live: list[str], rng: random.Random) -> object:
    from service.core.events.events import Linked

    return Linked(rng.choice(live), Link("relates", rng.choice(live)))


def build(root: Path, slug: str, count: int) -> Store:
    """A fresh store at `root` holding one project with `count` events."""
    store = Store.init(root)
    with store.transaction("") as tx:
        tx.append(
            [
                make(
                    tx.next_ids(1)[0],
                    tx.now(),
                    "project.added",
                    Origin("human", True),
                    "",
                    ProjectAdded(slug, "benchmark project"),
                )
            ]
        )
    store.import_events(slug, events_for(slug, count))
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("store", type=Path, help="the folder of the new store")
    parser.add_argument("slug", help="the project's slug")
    parser.add_argument("count", type=int, help="how many events")
    args = parser.parse_args()
    build(args.store, args.slug, args.count).close()


if __name__ == "__main__":
    main()
