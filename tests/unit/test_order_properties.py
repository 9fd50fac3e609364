"""One rule decides which copy of an id stays (service/core/events/order.py): the fold of a damaged
log, `self doctor --repair`, a sync's local-only events and a merge agree on it, whatever the
file order and however the copies differ."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from service.adapters.sync import identity, logs, merge
from service.core.events.events import Event, as_dict, canonical, decode_unchecked
from service.core.fold import fold
from tests.support.strategies import histories, raw

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def copies(draw: st.DrawFn, event: Event) -> bytes:
    """Another line of `event`'s id: the same bytes, other bytes of the same event, or
    another event under the same id (other time, other payload)."""
    kind = draw(st.sampled_from(("same", "spaced", "ts", "payload")))
    if kind == "same":
        return canonical(event)
    if kind == "spaced":  # keys in another order, spaces: the same canonical bytes
        return json.dumps(dict(reversed(as_dict(event).items())), separators=(", ", ": ")).encode() + b"\n"
    if kind == "ts":
        return canonical(msgspec.structs.replace(event, ts=draw(st.text("0123456789:TZ-.", max_size=24))))
    return canonical(msgspec.structs.replace(event, payload=raw({"other": draw(st.integers(0, 9))})))


@st.composite
def damaged_logs(draw: st.DrawFn) -> list[bytes]:
    """The lines of a log a hand edit or a plain-git merge left: repeated ids, copies that
    differ, in any order."""
    events = draw(histories(max_steps=10))
    extra = [draw(copies(e)) for e in draw(st.lists(st.sampled_from(events), min_size=1, max_size=8))]
    return draw(st.permutations([canonical(e) for e in events] + extra))


def canonical_of(line: bytes) -> bytes:
    return canonical(decode_unchecked(line.rstrip(b"\n")))


def by_id(lines: list[bytes]) -> dict[str, bytes]:
    """Each id's canonical bytes, checking that every id occurs once."""
    found: dict[str, bytes] = {}
    for line in lines:
        event_id = logs.line_id(line)
        assert event_id is not None and event_id not in found
        found[event_id] = canonical_of(line)
    return found


def fold_choice(lines: list[bytes]) -> dict[str, bytes]:
    kept, _ = fold.distinct(decode_unchecked(line.rstrip(b"\n")) for line in lines)
    return {e.id: canonical(e) for e in kept}


@PROPERTY
@given(lines=damaged_logs())
def test_fold_repair_and_sync_keep_the_same_copy(lines: list[bytes]) -> None:
    chosen = fold_choice(lines)
    assert by_id(logs.repaired(lines).lines) == chosen
    assert by_id(logs.local_only(lines, set()).events) == chosen
    assert fold_choice(list(reversed(lines))) == chosen


@PROPERTY
@given(lines=damaged_logs(), data=st.data())
def test_a_merge_keeps_that_copy_or_refuses_copies_that_differ(
    lines: list[bytes], data: st.DataObject
) -> None:
    ours = data.draw(st.lists(st.sampled_from(lines), min_size=1))
    theirs = data.draw(st.lists(st.sampled_from(lines), min_size=1))
    assume(ours[0] != theirs[0])  # no shared start: every line is in a tail
    differ = sorted(
        i
        for i in {logs.line_id(line) for line in ours + theirs}
        if len({x for x in ours + theirs if logs.line_id(x) == i}) > 1
    )
    if differ:
        with pytest.raises(identity.EventsDiffer) as refused:
            merge.merged_lines(ours, theirs)
        assert refused.value.ids == differ
    else:
        assert by_id(merge.merged_lines(ours, theirs)) == fold_choice(ours + theirs)
