"""A large Superself store comes over whole: its closes are vouched for by as many vouchers
as it takes, each under the event cap, each read before the closes it names.

The store is generated in Superself's shapes: entity-era records closed by `entity.done`,
and pre-entity objectives, milestones and work units closed by `objective.closed`,
`milestone.reached` and `work.done` — 5,200 closes, more than twice what one voucher held
under the cap.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import msgspec

from service.adapters.importers.superself import import_superself
from service.adapters.store import Store
from service.core.events import ids
from service.core.events.events import MAX_EVENT_BYTES, VOUCHER, Event, Origin, canonical
from service.core.ledger import completion

ORIGIN = Origin("human", True)
GROUPS = 1_300  # four closes each
AGENT = {"actor": "agent", "confirmed": True}


def superself_store(root: Path, groups: int = GROUPS) -> tuple[Path, int]:
    """A Superself store (registry.jsonl, projects/big/log.jsonl) with `groups` objectives,
    milestones, work units and entity-era records, each closed; its path and line count."""
    rng = random.Random(2207)
    ms = 1_785_000_000_000
    lines: list[dict[str, object]] = []

    def add(kind: str, payload: dict[str, object]) -> str:
        nonlocal ms
        ms += rng.randint(1, 3)  # several events may share a millisecond's neighbourhood
        eid = ids.encode(ms << 80 | rng.getrandbits(80))
        ts = "2026-08-01T16:00:00.000Z"
        lines.append(
            {"id": eid, "ts": ts, "type": kind, "origin": AGENT, "project": "big", "payload": payload}
        )
        return eid

    for n in range(groups):
        add("objective.created", {"objective": f"o-{n}", "outcome": f"objective {n}"})
        add("milestone.created", {"milestone": f"m-{n}", "objective": f"o-{n}", "outcome": f"milestone {n}"})
        add("work.created", {"work": f"w-{n}", "outcome": f"unit {n}"})
        record = add("entity.confirmed", {"entity": "", "text": f"record {n}", "labels": ["work"]})
        lines[-1]["payload"] = {"entity": record, "text": f"record {n}", "labels": ["work"]}
        add("work.done", {"work": f"w-{n}"})
        add("entity.done", {"entity": record})
        add("milestone.reached", {"milestone": f"m-{n}"})
        add("objective.closed", {"objective": f"o-{n}", "as": "reached"})
    store = root / "superself"
    (store / "projects" / "big").mkdir(parents=True)
    (store / "registry.jsonl").write_text(json.dumps({"slug": "big", "description": "a large store"}) + "\n")
    body = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
    (store / "projects" / "big" / "log.jsonl").write_text(body)
    return store, len(lines)


def test_a_store_of_thousands_of_closes_imports_whole_and_reads_as_judged(tmp_path: Path) -> None:
    path, written = superself_store(tmp_path)
    with Store.init(tmp_path / "hub") as store:
        summary = import_superself(store, path, ORIGIN)
        assert summary == {"projects": {"big": written}, "skipped_lines": {}}
        events = sorted(store.read("big").events, key=lambda e: e.id)
        state, quarantined = store.state("big")
    assert quarantined == []
    closes = [e for e in events if e.type in ("entity.done", *completion.LEGACY_DONES)]
    assert len(closes) == 4 * GROUPS > 2 * 2_200
    vouchers = [e for e in events if e.type == VOUCHER]
    assert len(vouchers) >= 3
    assert all(len(canonical(v)) <= MAX_EVENT_BYTES // 2 for v in vouchers)
    named = [i for v in vouchers for i in judged(v)]
    assert sorted(named) == sorted(e.id for e in closes)  # each close named once
    for v in vouchers:
        assert v.id < min(judged(v))  # read before every close it names
    assert sorted(state.vouched) == sorted(named)
    assert [s for s in state.signals if s.kind == "done-refused"] == []
    records = {e.id: e for e in state.entities.values()}
    assert sum(e.execution == "done" for e in records.values()) == len(closes)


def judged(voucher: Event) -> list[str]:
    return list(msgspec.json.decode(voucher.payload)["judged"])
