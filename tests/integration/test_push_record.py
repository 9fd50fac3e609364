"""The service's record of who pushed which events (`adapters/store/pushes.py`), on a real
file: replayed in order, read on from where it was left, a line cut short read once whole."""

from __future__ import annotations

from pathlib import Path

from service.adapters.store import pushes
from service.adapters.store.pushes import Brought

A, B, C = "01k00000000000000000000001", "01k00000000000000000000002", "01k00000000000000000000003"


def test_a_relayed_or_unclaimed_event_is_the_pushers_until_its_author_pushes_it(tmp_path: Path) -> None:
    local = tmp_path / ".local"
    assert pushes.relayed(local) == {}
    pushes.record(local, "c1" * 20, "ben", [Brought(A, "ann"), Brought(B, None), Brought(C, "ben")])
    assert pushes.relayed(local) == {A: "ben", B: "ben"}
    pushes.record(local, "c2" * 20, "ann", [Brought(A, "ann")])  # the first push did not land: ann's did
    assert pushes.relayed(local) == {B: "ben"}
    with (local / pushes.FILE).open("ab") as file:
        file.write(b'{"by":"eve","events":["' + C.encode())  # a line cut short
    assert pushes.relayed(local) == {B: "ben"}
    with (local / pushes.FILE).open("ab") as file:
        file.write(b'"],"relayed":["' + C.encode() + b'"]}\n')
    assert pushes.relayed(local) == {B: "ben", C: "eve"}
