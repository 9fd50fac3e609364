"""Context from a slice that holds apart the records that only fill a section
(`hotslice.fills`) renders what the whole state renders: the two kinds of row interleave in
render order."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from service.core.commands.config import WorkspaceConfig
from service.core.events import ids
from service.core.events.events import Event, Origin
from service.core.fold.fold import fold_all
from service.core.fold.hotslice import Kept
from service.core.fold.state import Entity, State
from service.core.projections.context import build_context, draft_context, render_agent

TODAY = "2026-11-30"
MS = 1_795_000_000_000


def confirmed(event_id: str, ts: str, text: str, **fields: object) -> Event:
    payload = {"entity": event_id, "text": text, "labels": ["note"], "exposure": "full", **fields}
    return Event(event_id, ts, "entity.confirmed", Origin("human", True), "app", msgspec.json.encode(payload))


def made(texts: list[tuple[str, dict[str, object]]]) -> list[Event]:
    """Records made one after the other (within one millisecond)."""
    events: list[Event] = []
    last = None
    ts = "2026-11-30T09:00:00.000Z"
    for text, fields in texts:
        last = ids.next_id(last, MS, 0)
        events.append(confirmed(last, ts, text, **fields))
    return events


def documents(whole: State) -> tuple[bytes, bytes]:
    kept = Kept(whole, fill=True)
    config = WorkspaceConfig()
    sliced = build_context(
        "app", kept.state, [], config, TODAY, {}, 0, cold=kept.cold, near=kept.near, filler=kept.filled
    )
    return msgspec.json.encode(sliced), msgspec.json.encode(
        build_context("app", whole, [], config, TODAY, {}, 0)
    )


def test_rows_of_the_slice_and_of_the_filling_interleave_newest_first() -> None:
    records = [
        ("fills, made first", {}),
        ("has a target, made second", {"target": "2027-01-01"}),
        ("fills, made third", {}),
        ("has a target, made fourth", {"target": "2027-01-02"}),
    ]
    whole = fold_all(made(records))
    kept = Kept(whole, fill=True)
    assert kept.filled.count("full") == 2 and len(kept.entities) == 2
    from_slice, from_whole = documents(whole)
    assert from_slice == from_whole
    rows = [row["text"] for row in msgspec.json.decode(from_slice)["sections"][0]["rows"]]
    assert [row.split("] ")[1] for row in rows] == [
        "has a target, made fourth (target 2027-01-02)",
        "fills, made third",
        "has a target, made second (target 2027-01-01)",
        "fills, made first",
    ]


def test_the_filling_is_read_only_as_far_as_the_budget_reaches() -> None:
    """An agent render within a small budget reads the first rows of the filling, not all."""
    whole = fold_all(made([(f"note number {n} " + "word " * 40, {}) for n in range(200)]))
    kept = Kept(whole, fill=True)
    assert kept.filled.count("full") == 200 and not kept.entities
    read: list[str] = []

    class Counting:
        def count(self, section: str) -> int:
            return kept.filled.count(section)

        def rows(self, section: str) -> Iterator[Entity]:
            for e in kept.filled.rows(section):
                read.append(e.id)
                yield e

    config = WorkspaceConfig()
    args = ("app", kept.state, [], config, TODAY, {}, 0)
    draft = draft_context(*args, cold=kept.cold, near=kept.near, filler=Counting())
    text = draft.render(500)
    assert text == render_agent(build_context("app", whole, [], config, TODAY, {}, 0), 500)
    assert 0 < len(set(read)) < 40
