"""The row render gate: labels, full and index rows, costs, short ids, pointers."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from service.core.events import ids
from service.core.events.events import Assertion, Origin, make
from service.core.fold.fold import fold_all
from service.core.fold.state import Entity
from service.core.projections import tokens
from service.core.projections.render import (
    cost,
    full_row,
    index_row,
    label_of,
    neighbours,
    one_line,
    pointer,
    short_ids,
    shorts_for,
)

HUMAN = Origin("human", True)


def entity(text: str, labels: tuple[str, ...] = ("note",), **kw: object) -> Entity:
    eid = ids.encode(1_800_000_000_000 << 80 | 7)
    payload = Assertion(entity=eid, text=text, labels=labels, **kw)  # type: ignore[arg-type]
    state = fold_all([make(eid, "2026-11-30T10:00:00.000Z", "entity.confirmed", HUMAN, "app", payload)])
    return state.entities[eid]


def test_label_of_first_label_or_dash() -> None:
    assert label_of(entity("x", ("goal", "team"))) == "goal"
    assert label_of(entity("x", ())) == "-"


def test_full_row_with_and_without_target() -> None:
    assert full_row(entity("teams share one typed project state", ("goal",))) == (
        "- [goal] teams share one typed project state"
    )
    row = full_row(entity("ship the sync beta", ("objective",), target="2099-03-31"))
    assert row == "- [objective] ship the sync beta (target 2099-03-31)"


def test_full_row_keeps_continuation_lines_inside_the_item() -> None:
    row = full_row(entity("first line\nsecond line\n", ("convention",)))
    assert row == "- [convention] first line\n  second line"


def test_index_row_adds_why_after_a_dash() -> None:
    assert index_row(entity("merge with union", ("decision",), why="simple")) == (
        "- [decision] merge with union — simple"
    )
    assert index_row(entity("raw note kept at index")) == "- [note] raw note kept at index"


def test_index_row_is_one_line_and_truncated() -> None:
    row = index_row(entity("a\nb   c " + "word " * 100, why="because\nreasons"))
    assert "\n" not in row
    assert row.startswith("- [note] a b c word")
    assert row.endswith("…")
    assert len(row) <= len("- [note] ") + 160


def test_one_line_short_text_unchanged() -> None:
    assert one_line("  spaced   out  ") == "spaced out"
    assert one_line("abcdef", 4) == "abc…"


def test_cost_is_the_estimate_of_the_rendered_row() -> None:
    e = entity("store events as JSONL in git", ("decision",), why="diffable and mergeable")
    assert cost(e, "full", 0.25) == tokens.estimate(full_row(e), 0.25)
    assert cost(e, "index", 0.25) == tokens.estimate(index_row(e), 0.25)
    assert cost(e, "search", 0.25) == 0
    assert cost(e, "index", 0.5) > cost(e, "index", 0.25)


def test_pointer_names_the_command() -> None:
    assert pointer("2 entities at search exposure", "self search --project app") == (
        "- 2 entities at search exposure; run `self search --project app`"
    )


def test_short_ids_minimum_eight_and_legacy_ids_whole() -> None:
    a = "01m8ny77axsajdxvve8vybrs65"
    b = "01m8ny77kvhz14cpsqxtx633rv"
    c = "01m8ny75fdy93k3mh0rjgk54hg"
    shorts = short_ids([a, b, c, "w-s7h2x", "o-vjaax", a])
    assert shorts == {
        a: "01m8ny77a",
        b: "01m8ny77k",
        c: "01m8ny75",
        "w-s7h2x": "w-s7h2x",
        "o-vjaax": "o-vjaax",
    }


def test_short_ids_prefix_of_another_id_stays_whole() -> None:
    shorts = short_ids(["abcdefghij", "abcdefghijk", "abcdefghz1"])
    assert shorts["abcdefghij"] == "abcdefghij"
    assert shorts["abcdefghijk"] == "abcdefghijk"
    assert shorts["abcdefghz1"] == "abcdefghz"
    assert short_ids([]) == {}


def test_short_ids_agree_with_the_reference_and_resolve_back() -> None:
    rng = random.Random(4)
    last = None
    pool: list[str] = []
    for n in range(400):  # bursts in one millisecond share long prefixes
        last = ids.next_id(last, 1_800_000_000_000 + n // 40, rng.getrandbits(80) if n % 3 else 0)
        pool.append(last)
    pool += ["w-s7h2x", "e-j5t7k"]
    shorts = short_ids(pool)
    for i in pool:
        assert shorts[i] == ids.short(i, pool)
        assert ids.resolve(shorts[i], pool) == i


def test_shorts_for_matches_short_ids_on_the_whole_universe() -> None:
    rng = random.Random(9)
    pool = [ids.next_id(None, 1_800_000_000_000 + n // 50, rng.getrandbits(80)) for n in range(2000)]
    wanted = [*pool[::97], "w-s7h2x"]
    full = short_ids([*pool, "w-s7h2x"])
    assert shorts_for(wanted, pool) == {w: full[w] for w in wanted}


@given(
    pool=st.lists(st.text("0123abc", min_size=1, max_size=12), min_size=1, max_size=60, unique=True),
    picks=st.lists(st.integers(0, 59), min_size=1, max_size=8),
)
def test_shorts_from_the_neighbours_alone_equal_shorts_from_every_id(
    pool: list[str], picks: list[int]
) -> None:
    """A short id is decided by the ids sorting right before and after it: given only those
    (what the hot slice fetches from its cold table), the result is the same."""
    wanted = {pool[p % len(pool)] for p in picks}
    near = neighbours(sorted(pool))
    full = short_ids(pool, minimum=2)
    assert shorts_for(wanted, near(wanted), minimum=2) == {w: full[w] for w in wanted}
