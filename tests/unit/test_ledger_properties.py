"""Properties of the ledger's derived views over random ledger histories: they are a pure
function of the event set (any order, any duplicates, any fold cut), they come out the same
from a hot slice of the state as from the whole of it, and they are a fixed point."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.core.commands.config import WorkspaceConfig
from service.core.events.events import Event, canonical, decode_unchecked
from service.core.fold import hotslice
from service.core.fold.fold import fold, fold_all
from service.core.fold.hotslice import ColdRecord
from service.core.fold.state import Entity, Report, State
from service.core.ledger import derived as ledger_views
from service.core.projections.context import build_context
from service.core.projections.render import neighbours
from tests.support.strategies import History

PROPERTY = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
KINDS = ("claim", "claim", "decision", "question")
STATES = ("unassessed", "accepted", "accepted", "disputed", "rejected", "odd")
REASONS = ("restate", "revise", "reverse", None)
SCOPES = ("src/**", "src/api/*", "docs/**", "src/api/v1.py", "README.md")
STEPS = (
    "record",
    "record",
    "record",
    "other",
    "assess",
    "revoke",
    "review",
    "review-owed",
    "retract",
    "superseded",
    "link",
    "unlink",
    "confirm",
    "placed",
)
UNKNOWN = "01zzzzzzzzzzzzzzzzzzzzzzzz"


class LedgerHistory(History):
    """Random ledger histories: records citing earlier (and sometimes unknown or non-ledger)
    records, some with scopes, supersessions with every reason, assessments, revocations, reviews, relations
    added later by other tools (cycles), retractions and confirmations."""

    def __init__(self, draw: st.DrawFn) -> None:
        super().__init__(draw)
        self.ledger: list[str] = []
        self.folded = State()

    def so_far(self) -> State:
        """The fold of the history so far (kept up to date, one event at a time)."""
        fold(self.events[self.folded.events :], self.folded)
        return self.folded

    def cite(self) -> str:
        pool = self.ledger or [UNKNOWN]
        if self.draw(st.integers(0, 12)) == 0:
            return self.draw(st.sampled_from([UNKNOWN, *self.entities]))
        return self.draw(st.sampled_from(pool))

    def record(self) -> None:
        event_id, ts = self.tick()
        kind = self.draw(st.sampled_from(KINDS))
        links: list[dict[str, object]] = []
        if self.ledger:
            for number in range(self.draw(st.integers(0, 2))):
                members = self.draw(st.lists(st.just(None), min_size=1, max_size=2))
                links += [{"type": "supports", "target": self.cite(), "set": number} for _ in members]
            for _ in range(self.draw(st.integers(0, 1))):
                links.append({"type": "depends-on", "target": self.cite()})
            for _ in range(self.draw(st.integers(0, 1))):
                links.append({"type": "answers", "target": self.cite()})
        fields: dict[str, object] = {}
        if self.draw(st.booleans()):
            fields["state"] = self.draw(st.sampled_from(STATES))
        if self.draw(st.integers(0, 2)) == 0:
            fields["applies_to"] = self.draw(st.lists(st.sampled_from(SCOPES), min_size=1, max_size=2))
        if self.ledger and self.draw(st.integers(0, 3)) == 0:
            links.append({"type": "supersedes", "target": self.cite()})
            reason = self.draw(st.sampled_from(REASONS))
            if reason:
                fields["supersede_reason"] = reason
        payload: dict[str, object] = {
            "entity": event_id,
            "text": f"{kind} {len(self.ledger)}",
            "labels": [kind],
            "links": links,
            "exposure": self.draw(st.sampled_from(("full", "index", "search"))),
        }
        if fields:
            payload["ledger"] = fields
        confirmed = self.draw(st.integers(0, 4)) > 0
        kind_name = "entity.confirmed" if confirmed else "entity.proposed"
        self.add(kind_name, payload, confirmed=confirmed, at=(event_id, ts))
        self.ledger.append(event_id)
        self.entities.append(event_id)

    def step(self) -> None:
        kind = self.draw(st.sampled_from(STEPS))
        if kind == "record" or not self.ledger:
            self.record()
        elif kind == "other":
            super().assertion(None)
        elif kind == "assess":
            state = self.draw(st.sampled_from(STATES))
            self.add("entity.assessed", {"entity": self.cite(), "state": state})
        elif kind == "revoke":
            self.add("entity.revoked", {"entity": self.cite()})
        elif kind == "review":
            mark = {"ground": self.cite(), "head": self.cite(), "reason": "revise", "as_of": self.cite()}
            self.add("entity.reviewed", {"entity": self.cite(), "marks": [mark]})
        elif kind == "review-owed":
            target = self.cite()
            view = ledger_views.derive(self.so_far(), [target]).get(target)
            marks = [msgspec.structs.asdict(o) for o in view.review_owed] if view else []
            self.add("entity.reviewed", {"entity": target, "marks": marks})
        elif kind == "retract":
            self.add("entity.retracted", {"entity": self.cite(), "why": "withdrawn"})
        elif kind == "superseded":
            self.add("entity.superseded", {"entity": self.cite(), "by": self.cite()})
        elif kind in ("link", "unlink"):
            link_type = self.draw(st.sampled_from(("supports", "depends-on", "answers")))
            link: dict[str, object] = {"type": link_type, "target": self.cite()}
            if link_type == "supports":
                link["set"] = self.draw(st.integers(0, 2))
            self.add(f"entity.{kind}ed", {"entity": self.cite(), "link": link})
        elif kind == "confirm":
            self.add("entity.confirmed", {"entity": self.cite()}, confirmed=True)
        elif kind == "placed":
            exposure = self.draw(st.sampled_from(("full", "index", "search")))
            self.add("entity.placed", {"entity": self.cite(), "exposure": exposure, "why": "moved"})


@st.composite
def ledger_histories(draw: st.DrawFn, max_steps: int = 30) -> list[Event]:
    history = LedgerHistory(draw)
    for _ in range(draw(st.integers(1, max_steps))):
        history.step()
    return history.events


def derived(state: State) -> bytes:
    return msgspec.json.encode(sorted(ledger_views.derive(state).items()))


@PROPERTY
@given(events=ledger_histories(), data=st.data())
def test_derived_views_are_a_function_of_the_event_set(events: list[Event], data: st.DataObject) -> None:
    expected = derived(fold_all(events))
    copies = data.draw(st.lists(st.sampled_from(events), max_size=len(events)))
    from_disk = [decode_unchecked(canonical(e)) for e in copies]
    shuffled = data.draw(st.permutations(events + copies + from_disk))
    assert derived(fold_all(shuffled)) == expected
    cut = data.draw(st.integers(0, len(events)))
    resumed = msgspec.msgpack.decode(msgspec.msgpack.encode(fold(events[:cut])), type=State)
    assert derived(fold(events[cut:], resumed)) == expected


@PROPERTY
@given(events=ledger_histories())
def test_derived_views_are_a_fixed_point(events: list[Event]) -> None:
    """Every blocked flag is what its own rule gives from the others, and so is every
    support value outside a cycle (a record only a cycle holds up is flagged)."""
    state = fold_all(events)
    deriver = ledger_views._Deriver(state.ledger)
    deriver.solve()
    for record_id, fact in state.ledger.items():
        if record_id in deriver.blocked:
            assert deriver.is_blocked(fact) == deriver.blocked[record_id]
        cited = {deriver.chain(m).head for s in fact.supports for m in s}
        if record_id in deriver.level and not cited & deriver.circular:
            circular = record_id in deriver.circular
            expected = ledger_views.FLAGGED if circular else deriver.record_level(record_id)
            assert deriver.level[record_id] == expected
    views = ledger_views.derive(state)
    for view in views.values():
        assert (view.support == "flagged") == bool(view.review_owed)
        assert (view.support == "unsupported") == bool(view.lost)
        adopted = view.kind == "decision" and view.current and view.state == "adopted"
        assert view.blocked == (adopted and bool(view.blocked_by))
        assert view.applicable == (None if view.kind != "decision" else not view.blocked_by)
        assert (view.resolved is None) == (view.kind != "question")


class Filling:
    """The records a slice keeps out that only fill a section (`hotslice.fills`), read as
    the store's table reads them: by section, in `hotslice.placing` order."""

    def __init__(self, cold: dict[str, ColdRecord], ids: set[str]) -> None:
        self.cold = cold
        self.ids = ids

    def entities(self, section: str) -> list[Entity]:
        found = [self.cold[i].entity for i in self.ids]
        return sorted((e for e in found if hotslice.section(e) == section), key=hotslice.placing)

    def count(self, section: str) -> int:
        return len(self.entities(section))

    def rows(self, section: str) -> Iterator[Entity]:
        return iter(self.entities(section))


def advance_slice(
    hot: State,
    cold: dict[str, ColdRecord],
    counts: hotslice.ColdCounts,
    reports: dict[str, list[Report]],
    tail: list[Event],
    filling: set[str] | None = None,
) -> bool:
    """What the store's hot cache does with appended events (service/adapters/store/hot.py);
    with `filling` (the ids of the cold records that only fill a section), as it does for a
    project's log."""
    touched = hotslice.touched(hot, tail)
    if touched is None:
        return False
    fetched = [cold.pop(i) for i in sorted(touched) if i not in hot.entities and i in cold]
    hotslice.bring_in(hot, counts, fetched, set(filling or ()))
    if filling is not None:
        filling -= touched
    hot.reports = {k: reports[k] for k in hotslice.filed(touched) if k in reports}
    fold(tail, hot)
    hotslice.complete(hot, touched, lambda wanted: [cold[i] for i in wanted if i in cold])
    for record in hotslice.push_out(hot, counts, touched, fill=filling is not None):
        cold[record.entity.id] = record
        if filling is not None and hotslice.fills(hot, record.entity, record.fact):
            filling.add(record.entity.id)
    reports.update(hot.reports)
    hot.reports = {}
    return True


def sliced_views(hot: State, whole: State) -> None:
    """The slice holds every fact a reader asks for, each fact it holds derives as in the
    whole state, and pruning it keeps the facts pruning the whole state would."""
    asked = {i for i, fact in whole.ledger.items() if hotslice.asked(fact) or i in hot.entities}
    assert asked <= set(hot.ledger)
    from_slice = ledger_views.derive(hot)
    from_whole = ledger_views.derive(whole, from_slice)
    assert msgspec.json.encode(sorted(from_slice.items())) == msgspec.json.encode(sorted(from_whole.items()))
    pruned = hotslice.kept_facts(hot.ledger, hot.entities)
    assert set(pruned) == set(hotslice.kept_facts(whole.ledger, hot.entities))


@PROPERTY
@given(events=ledger_histories(), cuts=st.lists(st.integers(1, 30), max_size=3), data=st.data())
def test_a_hot_slice_derives_and_renders_as_the_whole_state(
    events: list[Event], cuts: list[int], data: st.DataObject
) -> None:
    first = min([*cuts, len(events)])
    start = fold(events[:first])
    fill = data.draw(st.booleans())  # the records that only fill a section kept out too
    hot, cold_records, counts = hotslice.split(start, fill)
    hot = msgspec.msgpack.decode(msgspec.msgpack.encode(hot), type=State)  # as read from the cache
    cold = {r.entity.id: r for r in cold_records}
    filling = {r.entity.id for r in cold_records if hotslice.fills(start, r.entity, r.fact)} if fill else None
    reports = dict(start.reports)
    done = first
    for cut in [*sorted(c for c in cuts if c > first), len(events)]:
        if cut <= done:
            continue
        if not advance_slice(hot, cold, counts, reports, events[done:cut], filling):
            return
        done = cut
        whole = fold_all(events[:done])
        assert reports == whole.reports
        sliced_views(hot, whole)
        if data.draw(st.booleans()):  # as the store prunes the slice it writes back
            hot.ledger = hotslice.kept_facts(hot.ledger, hot.entities)
            sliced_views(hot, whole)
        config = WorkspaceConfig()
        near = neighbours(sorted(whole.entities))
        filler = None if filling is None else Filling(cold, filling)
        if filler is not None:  # the counts the snapshot keeps are the records the table holds
            held = [filler.count(s) for s in ("full", "progress", "index")]
            assert held == [counts.full, counts.progress, counts.index]
        from_slice = build_context(
            "app", hot, [], config, "2026-11-30", {}, 0, cold=counts, near=near, filler=filler
        )
        from_whole = build_context("app", whole, [], config, "2026-11-30", {}, 0)
        assert msgspec.json.encode(from_slice) == msgspec.json.encode(from_whole)


@PROPERTY
@given(events=ledger_histories())
def test_a_review_leaves_only_inherited_flags(events: list[Event]) -> None:
    """Whatever the history, reviewing a record takes every flag of its own: what it still
    owes comes from grounds that are themselves flagged or blocked."""
    from service.core.commands.commands import Clock
    from service.core.events import ids
    from service.core.events.events import Origin
    from service.core.ledger import ledger

    state = fold_all(events)
    last = [max(e.id for e in events)]

    def next_id() -> str:
        last[0] = ids.next_id(last[0], ids.time_ms(last[0]) + 1, 0)
        return last[0]

    clock = Clock(next_id, "2026-11-30T10:00:00.000Z", Origin("human", True), "app")
    for record_id, view in ledger_views.derive(state).items():
        if not [o for o in view.review_owed if o.reason not in ledger_views.INHERITED]:
            continue
        after = fold_all([*events, *ledger.review(state, clock, record_id, None)])
        still = ledger_views.derive(after, [record_id])[record_id].review_owed
        assert all(o.reason in ledger_views.INHERITED for o in still), still


@PROPERTY
@given(events=ledger_histories())
def test_a_slice_brings_in_every_fact_a_view_reads(events: list[Event]) -> None:
    """A record fetched into a slice (as a command naming it has it) derives as in the whole
    state once `complete` has brought in the facts its view reads, however few it kept."""
    whole = fold_all(events)
    for record_id in sorted(whole.ledger):
        hot, cold_records, _ = hotslice.split(whole)
        cold = {r.entity.id: r for r in cold_records}
        hotslice.with_records(hot, [cold[record_id]] if record_id in cold else [])
        hotslice.complete(hot, [record_id], lambda ids, cold=cold: [cold[i] for i in ids if i in cold])
        expected = ledger_views.derive(whole, [record_id])
        assert msgspec.json.encode(ledger_views.derive(hot, [record_id])) == msgspec.json.encode(expected)
