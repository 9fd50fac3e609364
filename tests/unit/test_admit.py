"""Posted events are admitted only when the fold would apply them as written: the same rules
the fold's health signals report, judged before anything is folded."""

from __future__ import annotations

from typing import Any

import pytest

from service.core.commands.config import Caps, WorkspaceConfig
from service.core.errors import ModelError
from service.core.events import posted
from service.core.events.events import Event, Origin
from service.core.events.ids import encode
from service.core.fold.fold import fold
from service.core.fold.state import State
from service.core.gates.admit import Post, admit

ANN = Origin("human", True, None, "ann")
TS = "2026-12-01T00:00:00.000Z"


class Writer:
    """Events made as the service makes them, folded one post at a time after admission."""

    def __init__(self, config: WorkspaceConfig | None = None) -> None:
        self.state = State()
        self.config = config or WorkspaceConfig()
        self.n = 1 << 90

    def make(self, kind: str, **payload: Any) -> Event:
        self.n += 1
        new = posted.NewEvent(type=kind, project="web", payload=payload)
        return posted.make(new, encode(self.n), TS, ANN)

    def post(self, *events: Event) -> None:
        post = Post(self.config)
        for n, event in enumerate(events):
            admit(self.state, event, n, post)
        fold(events, self.state)


def test_a_unit_is_done_with_evidence_from_the_same_post() -> None:
    w = Writer()
    unit = w.make("entity.confirmed", text="write the docs", labels=["work"])
    w.post(unit)
    report = w.make("report.added", text="written", work=unit.id, commit="a" * 40)
    w.post(report, w.make("entity.done", entity=unit.id))
    assert w.state.entities[unit.id].execution == "done" and not w.state.signals


@pytest.mark.parametrize(
    ("make", "code", "field"),
    [
        (lambda w, u: w.make("entity.done", entity=u), "evidence-required", "events[0].payload.report"),
        (lambda w, u: w.make("entity.started", entity="0" * 26), "not-found", "events[0].payload.entity"),
        (lambda w, u: w.make("entity.declined", entity="0" * 26), "not-found", "events[0].payload.entity"),
        (lambda w, u: w.make("entity.covered", entity=u, criterion="nope"), "invalid-value", None),
        (
            lambda w, u: w.make("entity.confirmed", entity=u, text="again"),
            "exists",
            "events[0].payload.entity",
        ),
        (lambda w, u: w.make("report.added", text="r", work="0" * 26), "not-found", "events[0].payload.work"),
        (lambda w, u: w.make("project.archived", slug="ghost"), "not-found", "events[0].payload.slug"),
        (lambda w, u: w.make("entity.done", entity=u, why="x"), "evidence-required", None),
    ],
)
def test_what_the_fold_would_only_flag_is_refused(make: Any, code: str, field: str | None) -> None:
    w = Writer()
    unit = w.make("entity.confirmed", text="write the docs", labels=["work"])
    w.post(unit)
    before = (w.state.events, w.state.last_id)
    with pytest.raises(ModelError) as caught:
        w.post(make(w, unit.id))
    assert caught.value.code == code
    if field is not None:
        assert caught.value.fields == (field,)
    assert (w.state.events, w.state.last_id) == before, "nothing folded"


def test_a_posted_decline_drops_a_placement_waiting() -> None:
    w = Writer()
    kept = w.make("entity.confirmed", text="events are never edited", labels=["convention"], exposure="full")
    w.post(kept)
    placing = {"entity": kept.id, "exposure": "search"}
    w.n += 1
    proposed = Origin("agent", False, None, "bot")
    w.post(
        posted.make(
            posted.NewEvent(type="entity.placed", project="web", payload=placing), encode(w.n), TS, proposed
        )
    )
    assert w.state.entities[kept.id].pending
    w.post(w.make("entity.declined", entity=kept.id, why="read every session"))
    record = w.state.entities[kept.id]
    assert (record.exposure, record.pending, w.state.signals) == ("full", [], [])


def test_a_forged_import_mark_is_refused() -> None:
    w = Writer()
    unit = w.make("entity.confirmed", text="write the docs", labels=["work"])
    w.post(unit)
    done = w.make("entity.done", entity=unit.id)
    forged = Event(
        done.id, done.ts, done.type, done.origin, done.project, done.payload, {"imported": "superself"}
    )
    with pytest.raises(ModelError) as caught:
        w.post(forged)
    assert caught.value.fields == ("events[0].refs.imported",)


def test_a_new_record_passes_the_ledgers_rules_and_the_retention_cap() -> None:
    w = Writer(WorkspaceConfig(caps=Caps(full_tokens=20, index_tokens=12000)))
    with pytest.raises(ModelError) as asked:
        w.post(w.make("entity.confirmed", text="should we cache the context?", labels=["decision"]))
    assert asked.value.fields[0].startswith("events[0].payload")
    w.post(w.make("entity.confirmed", text="a short rule", labels=["convention"], exposure="full"))
    long = " ".join(["words"] * 40)
    first = w.make("entity.confirmed", text="fits", labels=["convention"], exposure="full")
    with pytest.raises(ModelError) as capped:
        w.post(first, w.make("entity.confirmed", text=long, labels=["convention"], exposure="full"))
    assert capped.value.code == "cap-exceeded" and capped.value.fields == ("events[1].payload.exposure",)
    assert first.id not in w.state.entities, "nothing of the post folded"
