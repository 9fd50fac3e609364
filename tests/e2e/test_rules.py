"""Exit 2 is a rule saying no (retention cap, sanitize gate, evidence gate); nothing is written."""

from __future__ import annotations

import re

from tests.support.selfrun import Store, describe

LONG = "a longer goal that fits the cap alone but not beside another"


def test_cap_refuses_until_a_demotion_makes_room(store: Store) -> None:
    store.edit_config(caps={"full_tokens": 20})
    small = store.add("goal", "short goal")
    before = store.files()

    refused = store.run("goal", LONG)
    assert refused.returncode == 2, describe(refused)
    numbers = [int(n) for n in re.findall(r"\d+", refused.stderr)]
    assert 20 in numbers and any(n > 20 for n in numbers), describe(refused)
    assert "full" in refused.stderr and "--demote" in refused.stderr, describe(refused)
    assert store.files() == before, "a refused add changed the store"

    big = store.add("goal", LONG, "--demote", small, "--why", "make room")
    rows = store.by_id()
    assert rows[big]["exposure"] == "full"
    assert rows[small]["exposure"] == "index", "the demoted record did not move one tier down"

    waiting = store.add("goal", LONG + " again", "--demote", big, "--why", "room", "--proposed")
    rows = store.by_id()
    assert rows[waiting]["status"] == "proposed"
    assert rows[big]["exposure"] == "full", "a proposed demotion applied before a person confirmed"

    store.ok("state", "confirm", waiting)
    rows = store.by_id()
    assert rows[waiting]["status"] == "confirmed"
    assert rows[big]["exposure"] == "index", "confirming the add did not apply its demotion"
    assert (rows[waiting]["exposure"], rows[small]["exposure"]) == ("full", "index")


def test_sanitize_refuses_secrets_without_repeating_them(store: Store) -> None:
    before_log = store.json("log")
    before = store.files()
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert len(token) == 40
    for text, secret in (
        ("contact me at someone@example.com", "someone@example.com"),
        (f"push with {token}", token),
    ):
        proc = store.run("state", "add", text, "--label", "note")
        assert proc.returncode == 2, describe(proc)
        assert "payload.text" in proc.stderr, describe(proc)
        assert secret not in proc.stderr and secret not in proc.stdout, describe(proc)
        assert "refused: refused" not in proc.stderr, describe(proc)
    assert store.files() == before, "a refused add changed the store"
    assert store.json("log") == before_log, "`self log` shows events after refused adds"


def test_done_needs_evidence_and_covered_criteria(store: Store) -> None:
    unit = store.add("work", "write the merge")
    bare_done = store.run("work", "done", unit)
    assert bare_done.returncode == 2, describe(bare_done)
    assert "evidence" in bare_done.stderr, describe(bare_done)
    store.ok("work", "done", unit, "--report", "tests green")

    gated = store.add("work", "write the docs", "--criterion", "docs reviewed")
    refused = store.run("work", "done", gated, "--report", "tests green")
    assert refused.returncode == 2, describe(refused)
    assert "docs reviewed" in refused.stderr, describe(refused)

    store.ok("state", "cover", gated, "1")
    store.ok("work", "done", gated, "--report", "tests green")
    rows = store.by_id("--all")
    assert rows[unit]["execution"] == "done" and rows[gated]["execution"] == "done"
    assert rows[gated]["covered"] == ["docs reviewed"]
