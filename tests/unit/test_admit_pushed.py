"""The admission a push's events pass (`core/gates/admit.py` with the whole batch known): what
a command writes passes as written, a new record then the demotion that makes its room."""

from __future__ import annotations

import pytest

from service.core.commands.config import Caps, WorkspaceConfig
from service.core.errors import ModelError
from service.core.fold.fold import fold
from service.core.gates.admit import Post, admit
from tests.unit.test_admit import Writer

CONFIG = WorkspaceConfig(caps=Caps(full_tokens=30, index_tokens=12000))


def test_a_record_then_the_demotion_that_makes_its_room_is_admitted_as_a_batch() -> None:
    w = Writer(CONFIG)
    held = w.make("entity.confirmed", text=" ".join(["rule"] * 12), labels=["convention"], exposure="full")
    w.post(held)
    new = w.make("entity.confirmed", text=" ".join(["new"] * 12), labels=["convention"], exposure="full")
    demotion = w.make("entity.placed", entity=held.id, exposure="index", why="room")
    with pytest.raises(ModelError) as alone:
        w.post(new, demotion)  # a post judges each event as it comes: the cap is reached first
    assert alone.value.code == "cap-exceeded"
    batch = Post(CONFIG, [new, demotion])  # a push's batch is known whole
    for n, event in enumerate([new, demotion]):
        admit(w.state, event, n, batch)
    fold([new, demotion], w.state)
    assert w.state.entities[held.id].exposure == "index"


def test_a_voucher_is_not_admitted() -> None:
    w = Writer(CONFIG)
    unit = w.make("entity.confirmed", text="ship", labels=["work"])
    w.post(unit)
    voucher = w.make("import.superself", judged=[unit.id])
    with pytest.raises(ModelError) as caught:
        admit(w.state, voucher, 0, Post(CONFIG, [voucher]))
    assert caught.value.fields == ("events[0].type",)
