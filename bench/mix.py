"""The stress mix: a Superself store whose one project log holds many live records, a third of
them at full exposure, as a team that never demotes anything would leave it.

`python bench/mix.py DIR N` writes DIR/superself (Superself's `registry.jsonl` and
`projects/mix/log.jsonl`, entity-era shapes) with N events, deterministic for a seed, and
imports it into a fresh selfhub store at DIR/store (`self import superself`). At 100,980
events the project holds about 50,000 live records, 15,000 of them at full exposure.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the package, not bench/service.py

from service.core.events import ids

SLUG = "mix"
STRESS = 100_980  # events of the stress mix
AGENT = {"actor": "agent", "confirmed": True}
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
    "slice",
    "render",
    "priority",
]
KINDS = (  # label, exposure, weight
    ("decision", "full", 12),
    ("convention", "full", 10),
    ("note", "full", 8),
    ("decision", "index", 10),
    ("note", "index", 14),
    ("idea", "index", 10),
    ("idea", "search", 16),
    ("work", "search", 12),
    ("work", "index", 8),
)
PRIORITIES = (None, 0, 10, 20, 30, 40, 50)


class Mix:
    """The log as it is written: one line per event, and the records each step may name."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.ms = 1_785_000_000_000
        self.last: str | None = None
        self.lines: list[dict[str, object]] = []
        self.live: list[str] = []
        self.work: list[str] = []
        self.started: list[str] = []
        self.criteria: list[str] = []

    def add(self, kind: str, payload: dict[str, object]) -> str:
        self.ms += self.rng.randint(50, 5_000)
        self.last = ids.next_id(self.last, self.ms, self.rng.getrandbits(80))
        ts = dt.datetime.fromtimestamp(self.ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        line = {"id": self.last, "ts": ts, "type": kind, "origin": AGENT, "project": SLUG, "payload": payload}
        self.lines.append({**line, "refs": {"branch": "main"}})
        return self.last

    def text(self, low: int, high: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(low, high)))

    def create(self, proposed: bool = False) -> None:
        rng = self.rng
        label, exposure = rng.choices([k[:2] for k in KINDS], [k[2] for k in KINDS])[0]
        payload: dict[str, object] = {
            "entity": "",
            "text": self.text(6, 30) + ("\n" + self.text(4, 12) if rng.random() < 0.2 else ""),
            "labels": [label],
            "links": [],
            "criteria": ["tests pass"] if label == "work" and rng.random() < 0.3 else [],
            "exposure": exposure,
            "scope": "project",
            "why": "because " + self.text(2, 6) if rng.random() < 0.5 else None,
        }
        priority = rng.choice(PRIORITIES)
        if priority is not None:
            payload["priority"] = priority
        if rng.random() < 0.002:
            payload["target"] = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        event = self.add("entity.proposed" if proposed else "entity.confirmed", payload)
        payload["entity"] = event
        (self.work if label == "work" else self.live).append(event)
        if payload["criteria"]:
            self.criteria.append(event)

    def step(self) -> None:
        rng, roll = self.rng, self.rng.random()
        if roll < 0.58 or len(self.live) < 20:
            self.create()
        elif roll < 0.59:
            self.create(proposed=True)
        elif roll < 0.66:
            gone = self.live.pop(rng.randrange(len(self.live)))
            self.add("entity.retracted", {"entity": gone, "why": "no longer holds"})
        elif roll < 0.74:
            moved = rng.choice(self.live)
            self.add(
                "entity.placed", {"entity": moved, "priority": rng.choice(PRIORITIES[1:]), "why": "reread"}
            )
        elif roll < 0.80 and self.work:
            unit = rng.choice(self.work)
            self.started.append(unit)
            self.add("entity.started", {"entity": unit})
        elif roll < 0.83 and self.started:
            unit = self.started.pop(rng.randrange(len(self.started)))
            if unit in self.work:
                self.work.remove(unit)
                self.add("entity.done", {"entity": unit, "report": "done: " + self.text(2, 5)})
        elif roll < 0.86 and self.criteria:
            self.add("entity.covered", {"entity": rng.choice(self.criteria), "criterion": "tests pass"})
        elif roll < 0.87 and self.work:
            self.add("entity.blocked", {"entity": rng.choice(self.work), "on": "review"})
        else:
            source, target = rng.choice(self.live), rng.choice(self.live)
            self.add("entity.linked", {"entity": source, "link": {"type": "relates", "target": target}})


def lines_for(count: int, seed: int = 29) -> list[dict[str, object]]:
    """The first `count` events of the mix, deterministic for a seed."""
    mix = Mix(seed)
    while len(mix.lines) < count:
        mix.step()
    return mix.lines[:count]


def write_superself(root: Path, count: int, seed: int = 29) -> Path:
    """A Superself store at `root` whose project `mix` holds `count` events of the mix."""
    (root / "projects" / SLUG).mkdir(parents=True, exist_ok=True)
    (root / "registry.jsonl").write_text(json.dumps({"slug": SLUG, "description": "the stress mix"}) + "\n")
    body = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines_for(count, seed))
    (root / "projects" / SLUG / "log.jsonl").write_text(body)
    return root


def build(root: Path, count: int, seed: int = 29) -> Path:
    """A selfhub store at `root`/store with the mix imported; its path."""
    from service.adapters.importers.superself import import_superself
    from service.adapters.store import Store
    from service.core.events.events import Origin

    source = write_superself(root / "superself", count, seed)
    with Store.init(root / "store") as store:
        import_superself(store, source, Origin("human", True))
    return root / "store"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "dir", type=Path, help="the folder to write the Superself store and the selfhub store in"
    )
    parser.add_argument("count", type=int, nargs="?", default=STRESS, help="how many events")
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    print(build(args.dir, args.count, args.seed))


if __name__ == "__main__":
    main()
