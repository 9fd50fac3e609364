"""`self state decline ID [--why TEXT]`: a person's no to a proposal. A placement an agent
proposed on a confirmed record is dropped and the record keeps its place; a proposed record is
withdrawn with why; a record nothing of which waits is refused (exit 1, nothing written)."""

from __future__ import annotations

from tests.support.selfrun import Store, describe

AGENT = {"SELF_ACTOR": "agent"}


def test_a_proposed_placement_declined_leaves_the_record_where_it_is(store: Store) -> None:
    kept = store.add("convention", "events are never edited")
    placed = store.json("state", "place", kept, "--exposure", "search", "--why", "unused", "--proposed")
    assert placed["events"][0]["origin"]["confirmed"] is False
    assert "waiting on you: 1" in store.ok("status"), "the placement waits on a person"

    declined = store.json("state", "decline", kept, "--why", "read every session")["events"]
    assert [(e["type"], e["payload"]) for e in declined] == [
        ("entity.declined", {"entity": kept, "why": "read every session"})
    ]
    row = store.by_id()[kept]
    assert (row["status"], row["exposure"], row["pending"]) == ("confirmed", "full", False)
    assert "waiting on you: 0" in store.ok("status")
    assert "entity.declined" in store.ok("state", "show", kept, "--history")

    before = store.files()
    again = store.run("state", "decline", kept)
    assert again.returncode == 1, describe(again)
    assert f"nothing of {kept} waits on a person (it is confirmed)" in again.stderr, describe(again)
    assert store.files() == before, "a refused decline changed the store"
    refused = store.run("state", "confirm", kept)
    assert refused.returncode == 1, "the declined placement can no longer be confirmed"
    assert store.by_id()[kept]["exposure"] == "full"


def test_a_proposed_record_declined_is_withdrawn(store: Store) -> None:
    proposal = store.add("idea", "rewrite it in a weekend", "--proposed", env_extra=AGENT)
    [event] = store.json("state", "decline", proposal)["events"]
    assert (event["type"], event["payload"]["why"]) == ("entity.retracted", "declined")
    assert store.by_id("--all")[proposal]["status"] == "retracted"
