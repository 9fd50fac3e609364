"""Docket ledgers read whole: the reader (`service.core.ledger.docket`) and the import mapping
(`service.core.interop.exchange.import_docket`) on ledgers in Docket's on-disk shape
(tests/fixtures/docket, see its README)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from service.core.commands import commands
from service.core.commands.commands import Clock
from service.core.commands.config import Caps, WorkspaceConfig
from service.core.errors import Invalid
from service.core.events import ids
from service.core.events.events import Event, Evidence, Origin
from service.core.fold.fold import fold_all
from service.core.fold.state import State
from service.core.interop import exchange
from service.core.ledger import derived, docket, ledger

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "docket"
NOW = "2026-11-30T10:00:00.000Z"


def rows_of(name: str) -> list[tuple[int, Any]]:
    text = (FIXTURES / name).read_text("utf-8")
    return [(n, json.loads(line)) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


class Log:
    """A project log that Docket ledgers are imported into."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.n = 0

    def new_id(self) -> str:
        self.n += 1
        return ids.encode((1_800_000_000_000 + 2000 * self.n) << 80 | self.n)

    def state(self) -> State:
        return fold_all(self.events)

    def load(self, rows: list[tuple[int, Any]], config: WorkspaceConfig | None = None) -> dict[str, Any]:
        clock = Clock(self.new_id, NOW, Origin("human", True), "app")
        events, summary = exchange.import_docket(
            self.state(), config or WorkspaceConfig(), clock, docket.read(rows)
        )
        self.events += events
        return summary

    def record(self, alias: str, source: str | None = None) -> str:
        return ledger.aliases(self.state(), source)[alias]


@pytest.fixture
def first() -> Log:
    log = Log()
    log.load(rows_of("first.jsonl"))
    return log


def test_evidence_objects_are_kept_whole(first: Log) -> None:
    state = first.state()
    fields = state.entities[first.record("c2")].ledger
    assert fields is not None and fields.evidence == (
        Evidence("docs/gateway.md#headers", "2026-09-02T09:00:00+00:00", "3f2a9c1"),
        Evidence("https://example.org/gateway/changelog"),
    )
    row = ledger.record_row(state.entities[first.record("c2")], state.ledger[first.record("c2")])
    assert row["evidence"][0] == {
        "ref": "docs/gateway.md#headers",
        "checked_at": "2026-09-02T09:00:00+00:00",
        "commit": "3f2a9c1",
    }


def test_corrections_amend_the_record_as_docket_reads_it(first: Log) -> None:
    state = first.state()
    d4 = state.entities[first.record("d4")]
    assert d4.text == "Parse API responses with the standard library json module."
    assert d4.ledger is not None
    assert d4.ledger.evidence == (Evidence("bench/parse.md", "2026-09-05T08:00:00+00:00"),)
    assert (d4.ledger.decided_by, d4.ledger.revisit) == (
        "ada and grace",
        "when orjson ships wheels everywhere",
    )
    assert d4.ledger.corrections == ("d4.1", "d4.2")
    assert d4.ledger.alternatives == ("stdlib json",)  # uncorrected fields stay as recorded
    c7 = state.entities[first.record("c7")]
    assert c7.ledger is not None and c7.ledger.pinned and c7.ledger.applies_to == ("src/client/**",)
    assert c7.exposure == "full"  # pinned by its correction, placed as a pinned record is
    confirmed = next(e for e in first.events if e.refs and e.refs.get("docket") == "d4")
    assert confirmed.refs is not None and confirmed.refs["docket_corrections"] == ["d4.1", "d4.2"]


def test_a_review_line_clears_the_flag_it_pinned() -> None:
    rows = rows_of("first.jsonl")
    reviewed, unreviewed = Log(), Log()
    assert reviewed.load(rows)["reviews"] == 1
    without = [(n, raw) for n, raw in rows if raw.get("kind") != "review"]
    assert unreviewed.load(without)["reviews"] == 0
    view = derived.derive(unreviewed.state())[unreviewed.record("d4")]
    assert (view.support, [(o.ground, o.head) for o in view.review_owed]) == (
        "flagged",
        [(unreviewed.record("c2"), unreviewed.record("c6"))],
    )
    assert derived.derive(reviewed.state())[reviewed.record("d4")].support == "clean"
    event = next(e for e in reviewed.events if e.type == "entity.reviewed")
    assert event.refs == {"docket": "d4.r1"}


def test_a_review_whose_head_moved_on_clears_nothing() -> None:
    """Docket clears a flag only while the head it was reviewed at is still the head."""
    rows = rows_of("first.jsonl")
    later = {
        **rows[5][1],
        "id": "c11",
        "text": "The gateway adds a schema header to JSON responses only.",
        "supersedes": ["c6"],
        "ts": "2026-09-09T08:00:00+00:00",
    }
    log = Log()
    assert log.load([*rows, (len(rows) + 1, later)])["reviews"] == 0
    view = derived.derive(log.state())[log.record("d4")]
    assert [(o.ground, o.head) for o in view.review_owed] == [(log.record("c2"), log.record("c11"))]


def test_what_only_a_writer_refuses_is_kept_as_written(first: Log) -> None:
    rows = rows_of("first.jsonl")
    summary = Log().load(rows)
    assert summary["kept_as_written"] == {
        "alternative is the choice": 1,
        "alternative listed twice": 1,
        "phrased as a question": 2,
        "revisit is not a date": 1,
    }
    state = first.state()
    d5 = state.entities[first.record("d5")]
    assert d5.text == "Should the client cache responses?"
    assert d5.ledger is not None and d5.ledger.alternatives == ("an in-memory cache", "An in-memory  cache")
    d4 = state.entities[first.record("d4")]
    assert d4.ledger is not None and d4.ledger.choice == "stdlib json"


def test_two_ledgers_keep_their_own_id_spaces(first: Log) -> None:
    summary = first.load(rows_of("second.jsonl"))
    assert (summary["imported"], summary["skipped"]) == (4, 0)
    assert summary["not_read"] == {"kind feature": 1}  # a newer Docket's line, skipped as Docket does
    one, two = docket.identity(rows_of("first.jsonl")[0][1]), docket.identity(rows_of("second.jsonl")[0][1])
    assert one != two
    state = first.state()
    second_c1, second_c2 = first.record("c1", two), first.record("c2", two)
    assert second_c1 != first.record("c1", one)
    assert state.ledger[second_c2].supports == ((second_c1,),)
    assert state.ledger[first.record("d1", two)].depends_on == (second_c2,)  # c1, d1, q1: per kind
    migrated = next(
        e for e in first.events if e.refs and e.refs.get("docket_ledger") == two and e.refs["docket"] == "q1"
    )
    assert migrated.refs is not None and migrated.refs["docket_migrated_from"] == "d7"
    with pytest.raises(Invalid, match="c1 is the alias of 2 imported records"):
        commands.find(state, "c1")
    assert commands.find(state, "d10").id == first.record("d10", one)  # a unique alias still names it
    assert first.load(rows_of("second.jsonl"))["imported"] == 0  # each ledger again: nothing new
    assert first.load(rows_of("first.jsonl"))["imported"] == 0


def test_a_grown_ledger_adds_what_it_gained(first: Log) -> None:
    rows = rows_of("first.jsonl")
    grown = [
        *rows,
        (
            99,
            {
                **rows[2][1],
                "id": "q11",
                "text": "Do we sign the client binary?",
                "ts": "2026-09-10T08:00:00+00:00",
            },
        ),
        (100, {**rows[-1][1], "id": "d4.3", "fields": {"cost_if_wrong": "None worth naming."}}),
    ]
    summary = first.load(grown)
    assert (summary["imported"], summary["skipped"]) == (1, 10)
    assert summary["corrections_not_applied"] == ["d4.3"]


def test_current_records_are_placed_as_a_native_add_places_them(first: Log) -> None:
    state = first.state()
    table = WorkspaceConfig().alias_table()
    place = {
        alias: state.entities[first.record(alias)] for alias in ("c2", "q3", "d4", "c6", "d8", "d9", "c7")
    }
    assert (place["d4"].exposure, place["d4"].priority) == ("index", table["decide"].priority)
    assert (place["q3"].exposure, place["q3"].priority) == ("index", table["question"].priority)
    assert (place["c6"].exposure, place["c6"].priority) == ("index", table["claim"].priority)
    assert place["d9"].exposure == "full"  # pinned
    assert place["c2"].exposure == place["d8"].exposure == "search"  # superseded in the ledger
    assert not place["c2"].live and not place["d8"].live


def test_an_import_never_fails_on_a_cap() -> None:
    tight = WorkspaceConfig(caps=Caps(full_tokens=20, index_tokens=60))
    log = Log()
    summary = log.load(rows_of("first.jsonl"), tight)
    placed = summary["placed"]
    assert summary["imported"] == 10 and summary["demoted"] > 0
    assert placed["full"] + placed["index"] + placed["search"] == 10 and placed["search"] > 2
    spent = {"full": 0, "index": 0}
    for e in log.state().live():
        if e.exposure in spent:
            spent[e.exposure] += exchange.render.cost(e, e.exposure, tight.tokens_per_char)
    assert spent["full"] <= 20 and spent["index"] <= 60


def test_blocked_and_resolved_read_as_docket_derives_them(first: Log) -> None:
    views = derived.derive(first.state())
    d10 = views[first.record("d10")]
    assert d10.blocked and d10.blocked_by == (first.record("c7"),)
    assert views[first.record("q3")].resolved_by == (first.record("d4"),)
    assert views[first.record("d9")].state == "revoked"


def test_applicable_and_blocked_by_read_as_docket_projects_every_decision(first: Log) -> None:
    """Docket's `project` on this ledger: a superseded (d8) or revoked (d9) decision is not
    applicable and names itself; `blocked` stays the mark of current adopted decisions."""
    views = derived.derive(first.state())
    docket_reads = {
        "d4": (True, []),
        "d5": (True, []),
        "d8": (False, ["d8"]),
        "d9": (False, ["d9"]),
        "d10": (False, ["c7"]),
    }
    for alias, (applicable, blocked_by) in docket_reads.items():
        view = views[first.record(alias)]
        assert (view.applicable, view.blocked_by) == (applicable, tuple(map(first.record, blocked_by))), alias
    assert [a for a in docket_reads if views[first.record(a)].blocked] == ["d10"]
    assert {views[first.record(a)].applicable for a in ("c1", "c7", "q3")} == {None}


def test_older_shapes_docket_still_reads() -> None:
    """Evidence as a bare reference, no decided_by, a supersession naming no reason, a
    migrated record carrying its schema-1 source."""
    rows = rows_of("first.jsonl")
    c2 = {**rows[1][1], "evidence": ["docs/gateway.md"]}
    log = Log()
    log.load([rows[0], (2, c2), *rows[2:]])
    state = log.state()
    fields = state.entities[log.record("c2")].ledger
    assert fields is not None and fields.evidence == (Evidence("docs/gateway.md"),)
    d10 = state.entities[log.record("d10")]
    assert d10.ledger is not None and d10.ledger.decided_by is None
    assert state.ledger[log.record("d10")].reason == "revise"
    migrated = next(e for e in log.events if e.refs and e.refs.get("docket") == "c1")
    assert migrated.refs is not None and migrated.refs["docket_legacy"] == "d1"


def line(**fields: Any) -> dict[str, Any]:
    return {"schema": 2, "ts": "", "author": "", "session": "", "branch": "", **fields}


C1 = line(kind="claim", id="c1", text="the API returns JSON", state="accepted")
Q2 = line(kind="question", id="q2", text="which parser?")


@pytest.mark.parametrize(
    ("rows", "says"),
    [
        ([{"id": "d1", "question": "which?", "answer": "this", "state": "settled"}], "run `docket migrate`"),
        ([line(schema=3, kind="claim", id="c1", text="x")], "schema 3"),
        ([C1, {**C1, "text": "again"}], "holds this id twice"),
        ([line(kind="claim", id="c2", text="x"), {**C1}], "a higher one came before"),
        ([{**C1, "migrated_from": "x"}], "migrated_from is not a record id"),
        (
            [{"id": "c1", "kind": "feature", "text": "x"}],
            "kind 'feature' is not claim",
        ),  # no schema: not newer
        (
            [
                C1,
                line(kind="claim", id="c2", text="x", supersedes=["c1"]),
                line(kind="claim", id="c3", text="y", supersedes=["c1"]),
            ],
            "already superseded",
        ),
        ([C1, line(kind="decision", id="d2", text="x", choice="y", answers=["c1"])], "answers c1 is a claim"),
        (
            [C1, line(kind="correction", id="c1.1", corrects="c1", fields={"state": "rejected"}, reason="")],
            "state cannot be corrected",
        ),
        (
            [C1, line(kind="correction", id="c9.1", corrects="c9", fields={"text": "y"}, reason="")],
            "c9 names no record",
        ),
        (
            [Q2, line(kind="review", id="q2.r1", reviews="q2", grounds={"q2": "q2"}, note="")],
            "only a claim or decision is reviewed",
        ),
        ([C1, line(kind="claim", id="c2", text="x", evidence=[{"url": "y"}])], "needs a non-empty ref"),
        ([line(kind="claim", id="c1", text="x", choice="y")], "belong to decisions"),
    ],
)
def test_what_docket_reader_refuses_is_refused_with_its_line(rows: list[dict[str, Any]], says: str) -> None:
    with pytest.raises(Invalid, match=r"line \d") as caught:
        docket.read(list(enumerate(rows, 1)))
    assert says in str(caught.value)
