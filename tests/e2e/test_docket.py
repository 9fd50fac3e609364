"""Docket ledgers through `self import docket` and `self export docket`: whole
ledgers in Docket's on-disk shape (tests/fixtures/docket) read the same here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support import docket_reader
from tests.support.selfrun import Store, describe

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "docket"
FIRST, SECOND = FIXTURES / "first.jsonl", FIXTURES / "second.jsonl"


def by_alias(store: Store) -> dict[str, dict[str, Any]]:
    return {row["alias"]: row for row in store.rows("--all") if row.get("alias")}


def test_a_docket_ledger_imports_whole(store: Store) -> None:
    summary = store.json("import", "docket", str(FIRST))
    assert (summary["records"], summary["imported"], summary["corrections"], summary["reviews"]) == (
        10,
        10,
        3,
        1,
    )
    assert summary["kept_as_written"]["alternative is the choice"] == 1
    rows = by_alias(store)
    d4 = rows["d4"]
    assert d4["text"] == "Parse API responses with the standard library json module."
    assert d4["evidence"] == [{"ref": "bench/parse.md", "checked_at": "2026-09-05T08:00:00+00:00"}]
    assert d4["revisit"] == "when orjson ships wheels everywhere"
    assert (d4["choice"], d4["alternatives"]) == ("stdlib json", ["stdlib json"])
    assert d4["support"] == "clean"  # its review line acknowledged the revised ground
    assert rows["d5"]["text"] == "Should the client cache responses?"
    assert rows["c2"]["evidence"][0]["commit"] == "3f2a9c1"
    assert rows["d10"]["blocked_by"] == [rows["c7"]["id"]]
    assert rows["q3"]["resolved_by"] == [d4["id"]]
    assert store.json("state", "show", "d4")["id"] == d4["id"]


def test_state_list_rows_read_applicability_as_docket_projects_it(store: Store) -> None:
    """Docket's `applicable` and `blocked_by` for every decision of the ledger; a superseded
    (d8) or revoked (d9) one names itself but is not marked blocked anywhere."""
    store.ok("import", "docket", str(FIRST))
    rows = by_alias(store)
    alias_of = {row["id"]: alias for alias, row in rows.items()}
    named = {
        alias: (row["applicable"], [alias_of[i] for i in row["blocked_by"]])
        for alias, row in rows.items()
        if row["kind"] == "decision"
    }
    assert named == {
        "d4": (True, []),
        "d5": (True, []),
        "d8": (False, ["d8"]),
        "d9": (False, ["d9"]),
        "d10": (False, ["c7"]),
    }
    assert [a for a, row in rows.items() if row["blocked"]] == ["d10"]
    assert {rows[a]["applicable"] for a in ("c1", "c7", "q3")} == {None}
    listed = store.ok("state", "list", "--all")
    assert listed.count("blocked on") == 1, listed


def test_context_shows_every_current_record_with_its_alias(store: Store) -> None:
    text = store.ok("import", "docket", str(FIRST))
    assert "placed: 2 at full, 6 at index, 2 at search" in text, text
    rows = [r for r in store.rows() if r.get("alias")]
    current = [r for r in rows if r["current"]]
    assert len(current) == 8
    context = store.ok("context", "--plain")
    for row in current:
        assert f"alias {row['alias']}" in context, (row["alias"], context)
    listed = store.ok("state", "list")
    assert "(alias d4" in listed and "(alias q3" in listed, listed
    status = store.ok("status")
    assert "(d10) [decision] Stream bodies larger than 8 MB to disk.:" in status, status
    assert "(c7)" in status, status


def test_two_ledgers_in_one_workspace_keep_their_own_ids(store: Store) -> None:
    store.ok("import", "docket", str(FIRST))
    second = store.json("import", "docket", str(SECOND))
    assert (second["imported"], second["skipped"]) == (4, 0)
    rows = store.rows("--all")
    sources = {r["source"] for r in rows if r.get("alias")}
    assert len(sources) == 2
    mine = {r["alias"]: r for r in rows if r.get("source") == second["ledger"]}
    assert mine["c2"]["supports"] == [[mine["c1"]["id"]]]
    assert mine["d1"]["depends_on"] == [mine["c2"]["id"]]
    proc = store.run("state", "show", "c1")
    assert proc.returncode == 1 and "c1 is the alias of 2 imported records" in proc.stderr, describe(proc)
    assert store.json("import", "docket", str(SECOND))["imported"] == 0


def test_an_import_over_the_caps_places_lower_and_says_so(store: Store) -> None:
    store.edit_config(caps={"full_tokens": 20, "index_tokens": 60})
    text = store.ok("import", "docket", str(FIRST))
    assert "placed a tier lower than a native add would" in text, text
    assert len([r for r in store.rows() if r.get("alias")]) == 8


def test_a_schema_one_ledger_is_refused_naming_docket_migrate(store: Store, tmp_path: Path) -> None:
    old = tmp_path / "ledger.jsonl"
    old.write_text(
        json.dumps({"id": "d1", "question": "which?", "answer": "this", "state": "settled"}) + "\n"
    )
    proc = store.run("import", "docket", str(old))
    assert proc.returncode == 1, describe(proc)
    assert "line 1" in proc.stderr and "docket migrate" in proc.stderr, describe(proc)


def test_export_docket_then_import_gives_the_same_rows(store: Store, tmp_path: Path) -> None:
    store.ok("import", "docket", str(FIRST))
    out = tmp_path / "exported.jsonl"
    done = store.json("export", "docket", str(out))
    assert (done["records"], done["corrections"], done["reviews"], done["renumbered"]) == (10, 3, 2, [])
    lines = docket_reader.read(out.read_text("utf-8"), docket_reader.V049E5AA)
    assert all(line["schema"] == 2 for line in lines)
    store.ok("project", "add", "web")
    web = {"SELF_PROJECT": "web"}
    assert store.json("import", "docket", str(out), env_extra=web)["imported"] == 10

    def named(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        alias = {r["id"]: r["alias"] for r in rows}
        keep = ("text", "kind", "state", "support", "evidence", "revisit", "choice", "alternatives", "pinned")
        return {
            r["alias"]: {k: r[k] for k in keep}
            | {k: [alias.get(i, i) for i in r[k]] for k in ("blocked_by", "depends_on", "resolved_by")}
            for r in rows
        }

    here = named(store.rows("--all"))
    there = named(store.json("state", "list", "--all", env_extra=web))
    assert here == there
    proc = store.run("export", "docket", str(out))
    assert proc.returncode == 1 and "exists" in proc.stderr, describe(proc)


def test_two_ledgers_export_as_one_sequence_docket_reads(store: Store, tmp_path: Path) -> None:
    """The second ledger numbers each kind on its own and from 1 again: its records take the
    next numbers of the one sequence, and the export says which."""
    store.ok("import", "docket", str(FIRST))
    store.ok("import", "docket", str(SECOND))
    out = tmp_path / "both.jsonl"
    done = store.json("export", "docket", str(out))
    moved = [(pair["was"], pair["now"]) for pair in done["renumbered"]]
    assert moved == [("c1", "c11"), ("c2", "c12"), ("d1", "d13"), ("q1", "q14")]
    text = out.read_text("utf-8")
    for version in (docket_reader.V049E5AA, docket_reader.PER_KIND):
        docket_reader.read(text, version)
    by_id = {line["id"]: line for line in map(json.loads, text.splitlines())}
    assert by_id["d13"]["depends_on"] == ["c12"] and by_id["c12"]["supports"] == [["c11"]]
    shown = store.ok("export", "docket", str(tmp_path / "again.jsonl"))
    assert "4 renumbered" in shown and "d1 → d13" in shown, shown


def test_parquet_rows_carry_the_alias_blocked_and_the_work_a_decision_led_to(store: Store) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    from dulwich import porcelain

    store.ok("import", "docket", str(FIRST))
    rows = by_alias(store)
    checkout = store.root.parent / "checkout"
    (checkout / "src").mkdir(parents=True)
    (checkout / "src" / "client.py").write_text("a\n", "utf-8")
    repo = porcelain.init(str(checkout))
    identity = b"Test <test@example.invalid>"
    porcelain.add(repo, [str(checkout / "src" / "client.py")])
    porcelain.commit(repo, b"init", author=identity, committer=identity)
    store.ok("project", "link", "app", str(checkout))
    unit = store.add("work", "switch the client parser", "--intends", "src/**")
    store.ok("state", "link", unit, "d4")  # the alias names the decision
    store.ok("work", "start", unit)
    (checkout / "src" / "client.py").write_text("b\n", "utf-8")
    (checkout / "setup.cfg").write_text("s\n", "utf-8")
    porcelain.add(repo, [str(checkout / "src" / "client.py"), str(checkout / "setup.cfg")])
    porcelain.commit(repo, b"work", author=identity, committer=identity)
    store.ok("work", "done", unit, "--report", "parser switched")
    waiting = store.add("work", "stream big bodies")
    store.ok("state", "link", waiting, rows["d10"]["id"])
    out = store.root.parent / "decisions.parquet"
    assert store.json("export", "parquet", str(out))["rows"] == 5
    table = {row["alias"]: row for row in pq.read_table(out).to_pylist()}
    assert (table["d10"]["blocked"], table["d4"]["blocked"]) == (True, False)
    applicable = {alias: row["applicable"] for alias, row in table.items()}
    assert applicable == {"d4": True, "d5": True, "d8": False, "d9": False, "d10": False}
    assert table["d4"]["work"] == [
        {
            "id": unit,
            "state": "done",
            "intentional": ["src/client.py"],
            "unintentional": ["setup.cfg"],
            "unrealized": [],
        }
    ]
    assert table["d10"]["work"] == [
        {"id": waiting, "state": "next", "intentional": None, "unintentional": None, "unrealized": None}
    ]
    assert table["d9"]["work"] == [] and table["d9"]["outcome"] == "revoked"
    assert (table["d9"]["blocked"], table["d9"]["blocked_by"]) == (False, [rows["d9"]["id"]])


def test_a_record_the_sanitize_gate_refuses_is_named_by_its_line(store: Store, tmp_path: Path) -> None:
    lines = FIRST.read_text("utf-8").splitlines()
    q11 = {
        **json.loads(lines[2]),
        "id": "q11",
        "text": "Is the ledger under /home/alice/.claude/docket/ per repository?",
    }
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text("\n".join([*lines, json.dumps(q11)]) + "\n", "utf-8")
    proc = store.run("import", "docket", str(ledger))
    assert proc.returncode == 2, describe(proc)
    assert "line 16 (q11) payload.text holds an absolute machine-local path" in proc.stderr, describe(proc)
    assert [r for r in store.rows("--all") if r.get("alias")] == []  # nothing of the ledger is written


def test_a_torn_last_line_is_skipped_and_a_broken_one_refused(store: Store, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    text = FIRST.read_text("utf-8")
    ledger.write_text(text + '{"schema":2,"kind":"claim","id":"c11","te', "utf-8")
    summary = store.json("import", "docket", str(ledger))
    assert (summary["imported"], summary["torn_line_skipped"]) == (10, True)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"schema":2,"kind":"claim","id":"c1","te\n' + text, "utf-8")
    proc = store.run("import", "docket", str(broken))
    assert proc.returncode == 1 and "broken.jsonl:1 is not JSON" in proc.stderr, describe(proc)


REAL = Path(__file__).resolve().parents[1] / "fixtures" / "conformance" / "docket-real" / "ledger.jsonl"


def docket_rows(store: Store, text: str, names: dict[str, str]) -> dict[str, dict[str, Any]]:
    """`self state list --all --json` rows in Docket's words, beside Docket's reading of `text`."""
    from tests.support import docket_views

    ours: dict[str, dict[str, Any]] = {}
    for row in store.rows("--all"):
        if row["id"] not in names or row["kind"] not in ("claim", "decision"):
            continue
        ours[names[row["id"]]] = {
            "support": row["support"],
            "review_owed": [(names[o["ground"]], names[o["head"]]) for o in row["review_owed"]],
        }
    theirs = {
        i: {"support": row["support"], "review_owed": [(o["ground"], o["head"]) for o in row["review_owed"]]}
        for i, row in docket_views.theirs(text).items()
        if "support" in row
    }
    return {i: {"ours": ours.get(i), "docket": theirs.get(i)} for i in ours.keys() | theirs.keys()}


def test_docket_s_own_ledger_leaves_as_it_came(store: Store, tmp_path: Path) -> None:
    """Import, export: Docket's own ledger byte for byte (provenance, legacy, corrections and
    their reasons, reviews and their notes); imported again elsewhere and exported, the same."""
    text = REAL.read_text("utf-8")
    summary = store.json("import", "docket", str(REAL))
    assert (summary["records"], summary["corrections"], summary["reviews"]) == (154, 3, 8)
    out = tmp_path / "back.jsonl"
    done = store.json("export", "docket", str(out))
    assert (done["records"], done["corrections"], done["reviews"]) == (154, 3, 8)
    assert out.read_bytes() == REAL.read_bytes()
    store.ok("project", "add", "again")
    again = {"SELF_PROJECT": "again"}
    store.ok("import", "docket", str(out), env_extra=again)
    twice = tmp_path / "twice.jsonl"
    store.ok("export", "docket", str(twice), env_extra=again)
    assert twice.read_text("utf-8") == text


def test_an_assessment_after_a_review_is_owed_in_the_export_too(store: Store, tmp_path: Path) -> None:
    """A review takes a revised ground; the new head is then disputed. `self state list` owes
    the review again, and Docket, reading the export, owes it too (and the decision on it
    inherits the flag in both)."""
    signed = {"SELF_USER": "ada", "SELF_SESSION": "s-42"}
    c1 = store.add("claim", "the API returns JSON", "--state", "accepted", env_extra=signed)
    c2 = store.add("claim", "clients can parse every response", "--state", "accepted", "--supports", c1)
    d3 = store.add("decide", "parse with the standard library", "--choice", "stdlib json", "--supports", c2)
    c4 = store.add(
        "claim",
        "the API returns JSON with a schema",
        "--state",
        "accepted",
        "--supersedes",
        c1,
        "--supersede-reason",
        "revise",
    )
    store.ok("review", c2, "--why", "the schema changes nothing for parsing")
    store.ok("claim", "assess", c4, "--state", "disputed", "--why", "the schema is optional")
    out = tmp_path / "ledger.jsonl"
    store.ok("export", "docket", str(out))
    names = {c1: "c1", c2: "c2", d3: "d3", c4: "c4"}
    compared = docket_rows(store, out.read_text("utf-8"), names)
    assert all(pair["ours"] == pair["docket"] for pair in compared.values()), compared
    assert compared["c2"]["docket"] == {"support": "flagged", "review_owed": [("c1", "c4")]}
    assert compared["d3"]["docket"] == {"support": "flagged", "review_owed": [("c2", "c2")]}
    first = json.loads(out.read_text("utf-8").splitlines()[0])
    assert (first["id"], first["author"], first["session"]) == ("c1", "ada", "s-42")  # who wrote it
