"""Properties of the pure model: the fold is a function of the set of events, the canonical
encoding is a fixed point, and ids from the hybrid logical clock only ever go up."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.core.errors import Invalid
from service.core.events import ids
from service.core.events.events import (
    Assertion,
    Event,
    Link,
    Origin,
    as_dict,
    canonical,
    decode_line,
    decode_unchecked,
    make,
)
from service.core.fold.fold import fold, fold_all
from service.core.fold.state import State
from tests.support.strategies import MAX_RANDOM, START_MS, histories, iso, raw

settings.register_profile(
    "model-properties",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROPERTY = settings.get_profile("model-properties")


def encoded(state: State) -> bytes:
    return msgspec.msgpack.encode(state)


# --- (a) the fold over random histories --------------------------------------------------


def copy_from_disk(event: Event) -> Event:
    """The same event as a replica reads it back from its own log file (the envelope only:
    a malformed payload is the fold's to report, not the reader's)."""
    return decode_unchecked(canonical(event))


@pytest.mark.slow
@PROPERTY
@given(events=histories(), data=st.data())
def test_fold_all_ignores_file_order(events: list[Event], data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(events))
    assert encoded(fold_all(shuffled)) == encoded(fold_all(events))


@pytest.mark.slow
@PROPERTY
@given(events=histories(), data=st.data())
def test_fold_all_drops_duplicate_copies(events: list[Event], data: st.DataObject) -> None:
    copies = data.draw(st.lists(st.sampled_from(events), max_size=len(events)))
    merged = data.draw(st.permutations(events + [copy_from_disk(e) for e in copies] + copies))
    state = fold_all(merged)
    assert encoded(state) == encoded(fold_all(events))
    assert not [s for s in state.signals if s.kind == "conflicting-copies"]
    assert state.events == len(events)


@PROPERTY
@given(events=histories(), data=st.data())
def test_incremental_fold_equals_full_fold(events: list[Event], data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(events)))
    full = encoded(fold_all(events))
    state = fold(events[:cut])
    # Through a snapshot, the way a command resumes from its cache.
    snapshot = msgspec.msgpack.decode(encoded(state), type=State)
    assert encoded(fold(events[cut:], state)) == full
    assert encoded(fold(events[cut:], snapshot)) == full


def test_fold_refuses_events_out_of_order() -> None:
    history = [
        Event(ids.encode(n << 80), iso(n), "zz.x", Origin("agent", False), "app", raw({})) for n in (1, 2)
    ]
    state = fold(history)
    with pytest.raises(ValueError, match="fold_all"):
        fold(history[:1], state)


def test_differing_copies_are_a_signal_and_resolve_the_same_everywhere() -> None:
    base = Event(ids.encode(5 << 80), iso(5), "zz.x", Origin("agent", False), "app", raw({"a": 1}))
    other = msgspec.structs.replace(base, payload=raw({"a": 2}))
    one, two = fold_all([base, other]), fold_all([other, base])
    assert encoded(one) == encoded(two)
    assert [s.kind for s in one.signals] == ["conflicting-copies"]


# --- (b) the canonical encoding ----------------------------------------------------------

JSON_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
)
JSON_KEY = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
JSON = st.recursive(
    JSON_SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(JSON_KEY, inner, max_size=4),
    max_leaves=15,
)
UNICODE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
ID = st.integers(0, ids.MAX_ID_VALUE).map(ids.encode)
ORIGIN = st.builds(
    Origin,
    st.sampled_from(("agent", "human")),
    st.booleans(),
    st.none() | UNICODE,
    st.none() | UNICODE,
)
REFS = st.none() | st.dictionaries(JSON_KEY, JSON, max_size=4)


@st.composite
def any_events(draw: st.DrawFn) -> Event:
    """An event of an unknown type with any JSON payload, or a typed one with unicode text."""
    event_id, ts, origin, project, refs = (draw(ID), draw(UNICODE), draw(ORIGIN), draw(UNICODE), draw(REFS))
    if draw(st.booleans()):
        payload = draw(st.dictionaries(JSON_KEY, JSON, max_size=5))
        return Event(
            event_id,
            ts,
            "zz." + draw(UNICODE),
            origin,
            project,
            msgspec.Raw(msgspec.json.encode(payload)),
            refs,
        )
    assertion = Assertion(
        entity=draw(ID),
        text=draw(UNICODE),
        labels=tuple(draw(st.lists(UNICODE, max_size=3))),
        links=tuple(draw(st.lists(st.builds(Link, UNICODE, ID), max_size=2))),
        criteria=tuple(draw(st.lists(UNICODE, max_size=3))),
        why=draw(st.none() | UNICODE),
        target=draw(st.none() | UNICODE),
    )
    return make(
        event_id,
        ts,
        draw(st.sampled_from(("entity.proposed", "entity.confirmed"))),
        origin,
        project,
        assertion,
        refs,
    )


def keys_sorted(value: Any) -> bool:
    if isinstance(value, list):
        return all(keys_sorted(v) for v in value)
    if isinstance(value, tuple):  # (key, value) pairs from object_pairs_hook
        return False
    if isinstance(value, dict):
        return all(keys_sorted(v) for v in value.values())
    return True


def sorted_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    assert keys == sorted(keys), keys
    return dict(pairs)


@PROPERTY
@given(event=any_events())
def test_canonical_bytes_are_a_fixed_point(event: Event) -> None:
    line = canonical(event)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    again = decode_line(line)
    assert canonical(again) == line
    assert as_dict(again) == as_dict(event)
    assert again.id == event.id and again.origin == event.origin and again.refs == event.refs
    # Keys sorted at every level, no insignificant whitespace, UTF-8 throughout.
    parsed = json.loads(line.decode("utf-8"), object_pairs_hook=sorted_pairs)
    assert keys_sorted(parsed)
    assert line == msgspec.json.encode(msgspec.json.decode(line), order="sorted") + b"\n"


@PROPERTY
@given(event=any_events())
def test_typed_events_round_trip_exactly(event: Event) -> None:
    if event.type.startswith("zz."):
        return
    assert decode_line(canonical(event)) == event
    assert decode_unchecked(canonical(event)) == event


def test_decode_line_says_why_a_line_is_not_an_event() -> None:
    with pytest.raises(Invalid):
        decode_line(b'{"id": "x"}')
    with pytest.raises(Invalid):
        decode_line(b"not json")
    bad = b'{"id":"a","ts":"t","type":"entity.placed","origin":{"actor":"agent","confirmed":true},'
    with pytest.raises(Invalid):
        decode_line(bad + b'"project":"p","payload":{"entity":5}}')


# --- (c) ids -----------------------------------------------------------------------------

STEP = st.tuples(st.integers(0, (1 << 48) - 1), st.integers(0, MAX_RANDOM))


@PROPERTY
@given(
    # room for every step to overflow into the next millisecond: the last one is the end of the id space
    start=st.none() | st.integers(0, (ids.MAX_TIME - 64) << ids.RANDOM_BITS).map(ids.encode),
    steps=st.lists(STEP, min_size=1, max_size=30),
)
def test_next_id_always_rises_and_never_lags_the_clock(
    start: str | None, steps: list[tuple[int, int]]
) -> None:
    last = start
    for now, random80 in steps:
        new = ids.next_id(last, now, random80)
        assert ids.is_id(new)
        assert ids.time_ms(new) >= now
        if last is not None:
            assert new > last
            assert ids.decode(new) > ids.decode(last)
            if now > ids.time_ms(last):
                assert ids.time_ms(new) == now  # a fresh id when the clock is ahead
        last = new


@PROPERTY
@given(
    base=st.integers(START_MS, START_MS + 10**6),
    deltas=st.lists(st.integers(-1000, 1000), min_size=1, max_size=40),
    randoms=st.lists(st.integers(0, MAX_RANDOM), min_size=40, max_size=40),
)
def test_next_id_under_a_skewed_clock(base: int, deltas: list[int], randoms: list[int]) -> None:
    last: str | None = None
    now = base
    seen: list[str] = []
    for delta, random80 in zip(deltas, randoms, strict=False):
        now += delta
        last = ids.next_id(last, now, random80)
        seen.append(last)
    assert seen == sorted(seen) and len(set(seen)) == len(seen)


def test_next_id_refuses_when_the_space_is_exhausted() -> None:
    with pytest.raises(Invalid, match="exhausted"):
        ids.next_id(ids.encode(ids.MAX_ID_VALUE), 0, 0)


@PROPERTY
@given(value=st.integers(0, ids.MAX_ID_VALUE))
def test_encode_decode_round_trip(value: int) -> None:
    text = ids.encode(value)
    assert len(text) == ids.ID_LENGTH and ids.is_id(text)
    assert ids.decode(text) == value


@pytest.mark.parametrize("text", ["", "0" * 25, "0" * 27, *("0" * 25 + c for c in "ilouA_")])
def test_decode_refuses_what_is_not_an_id(text: str) -> None:
    assert not ids.is_id(text)
    with pytest.raises(Invalid):
        ids.decode(text)


@PROPERTY
@given(known=st.lists(ID, min_size=1, max_size=30, unique=True), data=st.data())
def test_resolve_finds_unique_prefixes_and_reports_the_rest(known: list[str], data: st.DataObject) -> None:
    target = data.draw(st.sampled_from(known))
    short = ids.short(target, known)
    assert target.startswith(short) and len(short) >= 8
    assert [k for k in known if k.startswith(short)] == [target]
    assert ids.resolve(short, known) == target
    assert ids.resolve(f"  {short.upper()} ", known) == target
    assert ids.resolve(target, known) == target
    for length in range(1, len(target)):
        prefix = target[:length]
        matches = [k for k in known if k.startswith(prefix)]
        if len(matches) > 1:
            with pytest.raises(Invalid, match="ambiguous"):
                ids.resolve(prefix, known)
        else:
            assert ids.resolve(prefix, known) == target
    unknown = next(c * 12 for c in ids.ALPHABET if not any(k.startswith(c * 12) for k in known))
    with pytest.raises(Invalid, match="no record"):
        ids.resolve(unknown, known)


def test_resolve_refuses_what_is_not_a_prefix() -> None:
    known = [ids.encode(1), ids.encode(2)]
    for bad in ("", "   ", "a b", "0!"):
        with pytest.raises(Invalid):
            ids.resolve(bad, known)
    with pytest.raises(Invalid, match="ambiguous"):
        ids.resolve("0000", known)
    assert ids.resolve("o-vjaax", ["o-vjaax", "m-kshe3"]) == "o-vjaax"
    assert ids.resolve("m-", ["o-vjaax", "m-kshe3"]) == "m-kshe3"
