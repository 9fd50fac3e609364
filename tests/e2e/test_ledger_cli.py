"""The ledger through the `self` command: records, relations, derived views, reviews,
and every write rule's refusal (exit 1, the rule named)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.selfrun import Store, describe

CONTRACT = {"kind", "state", "support", "review_owed", "blocked_by", "applicable", "resolved", "resolved_by"}


def refused(store: Store, *args: str, says: str) -> None:
    proc = store.run(*args)
    assert proc.returncode == 1, describe(proc)
    assert says in proc.stderr, describe(proc)
    assert proc.stdout == "", describe(proc)


def row(store: Store, record: str, *args: str) -> dict[str, Any]:
    return store.by_id("--all", *args)[record]


def test_claims_decisions_and_questions_carry_the_contract(store: Store) -> None:
    c1 = store.add("claim", "the API returns JSON", "--state", "accepted", "--evidence", "docs/api.md")
    q = store.add("question", "which wire format do clients get?")
    d = store.add(
        "decide",
        "parse with the stdlib",
        "--choice",
        "stdlib",
        "--alternative",
        "orjson",
        "--alternative",
        "ujson",
        "--decided-by",
        "alice",
        "--supports",
        c1,
        "--answers",
        q,
        "--rationale",
        "no new dependency",
        "--scope",
        "src/client/**",
        "--revisit",
        "2099-01-31",
        "--cost-if-wrong",
        "a slower client",
    )
    goal = store.add("goal", "ship the client")
    rows = store.by_id()
    assert all(set(rows[r]) >= CONTRACT for r in (c1, q, d))
    assert not CONTRACT & set(rows[goal])
    assert {k: rows[c1][k] for k in CONTRACT} == {
        "kind": "claim",
        "state": "accepted",
        "support": "clean",
        "review_owed": [],
        "blocked_by": [],
        "applicable": None,
        "resolved": None,
        "resolved_by": [],
    }
    assert (rows[q]["kind"], rows[q]["resolved"], rows[q]["resolved_by"]) == ("question", True, [d])
    decision = rows[d]
    assert (decision["kind"], decision["state"], decision["why"]) == (
        "decision",
        "adopted",
        "no new dependency",
    )
    assert decision["choice"] == "stdlib" and decision["alternatives"] == ["orjson", "ujson"]
    assert decision["supports"] == [[c1]] and decision["answers"] == [q]
    assert decision["applies_to"] == ["src/client/**"] and decision["revisit"] == "2099-01-31"
    assert decision["decided_by"] == "alice" and decision["cost_if_wrong"] == "a slower client"
    assert rows[c1]["evidence"] == ["docs/api.md"]
    assert store.json("claim", "list")[0]["id"] == c1


def test_supersession_reasons_through_the_cli(store: Store) -> None:
    c1 = store.add("claim", "the API returns JSON", "--state", "accepted")
    c2 = store.add("claim", "clients can parse responses", "--state", "accepted", "--supports", c1[:10])
    c3 = store.add(
        "claim",
        "the API returns JSON with a schema",
        "--state",
        "accepted",
        "--supersedes",
        c1,
        "--supersede-reason",
        "revise",
    )
    flagged = row(store, c2)
    assert flagged["support"] == "flagged"
    assert [(o["ground"], o["head"], o["reason"]) for o in flagged["review_owed"]] == [(c1, c3, "revise")]
    status = store.json("status")
    assert [r["record"] for r in status["review_owed"]] == [c2]
    assert "review owed: 1" in store.ok("status")
    assert "flagged: review owed on" in store.ok("context", "--plain")
    store.ok("review", c2, "--why", "the schema changes nothing for parsing")
    assert row(store, c2)["support"] == "clean"
    refused(store, "review", c2, says="owes no review")
    store.ok(
        "claim",
        "add",
        "the API returns XML",
        "--state",
        "accepted",
        "--supersedes",
        c3,
        "--supersede-reason",
        "reverse",
    )
    lost = row(store, c2)
    assert lost["support"] == "unsupported" and lost["lost"][0]["reason"] == "reverse"
    assert "unsupported" in store.ok("status")


def test_alternative_support_sets(store: Store) -> None:
    c1 = store.add("claim", "the staging run passed", "--state", "accepted")
    c2 = store.add("claim", "the unit tests pass", "--state", "accepted")
    both = store.add(
        "claim", "the build is releasable", "--state", "accepted", "--supports", c1, "--supports", c2
    )
    assert row(store, both)["supports"] == [[c1], [c2]]
    store.ok(
        "claim",
        "the staging run failed",
        "--state",
        "accepted",
        "--supersedes",
        c1,
        "--supersede-reason",
        "reverse",
    )
    assert row(store, both)["support"] == "clean"


def test_assess_revoke_and_blocked_decisions(store: Store) -> None:
    c = store.add("claim", "the license allows vendoring")
    d = store.add("decide", "vendor the library", "--depends-on", c)
    assert row(store, c)["state"] == "unassessed"
    assert row(store, d)["blocked_by"] == [c]
    assert "blocked on" in store.ok("context", "--plain")
    store.ok("claim", "assess", c, "--state", "accepted", "--why", "read the license")
    assert row(store, d)["blocked_by"] == []
    store.ok("decide", "revoke", d, "--why", "we chose a fork")
    assert row(store, d)["state"] == "revoked"
    refused(store, "decide", "revoke", d, says="already revoked")
    refused(store, "claim", "assess", d, "--state", "accepted", says="only a claim is assessed")
    refused(store, "claim", "assess", c, "--state", "true", says="is not one of")


def test_questions_reopen_when_their_answer_is_superseded(store: Store) -> None:
    q = store.add("question", "which database?")
    c = store.add("claim", "postgres", "--state", "accepted", "--answers", q)
    assert row(store, q)["resolved_by"] == [c]
    store.ok(
        "claim", "postgres 16", "--state", "accepted", "--supersedes", c, "--supersede-reason", "restate"
    )
    assert row(store, q)["resolved"] is False
    assert "(unresolved)" in store.ok("context", "--plain")


def test_scope_does_not_decide_what_applies(store: Store) -> None:
    """As in Docket, applicability comes from prerequisites alone; a scope is recorded."""
    q = store.add("question", "how are the docs built?", "--scope", "docs/**")
    api = store.add("decide", "build everything with make", "--scope", "src/api/**", "--answers", q)
    assert (row(store, q)["resolved_by"], row(store, q)["applies_to"]) == ([api], ["docs/**"])
    retry = store.add("decide", "retry idempotent calls", "--scope", "docs/**", "--depends-on", api)
    assert (row(store, retry)["blocked"], row(store, retry)["blocked_by"]) == (False, [])


def test_flags_pass_up_and_a_revised_prerequisite_owes_a_review(store: Store) -> None:
    c1 = store.add("claim", "the disk is fast", "--state", "accepted")
    c2 = store.add("claim", "the fold fits in a second", "--state", "accepted", "--supports", c1)
    c3 = store.add("claim", "context stays under a second", "--state", "accepted", "--supports", c2)
    d = store.add("decide", "fold on every command", "--depends-on", c1)
    c4 = store.add("claim", "the disk is fast for reads", "--state", "accepted", "--supersedes", c1)
    owed = {i: [(o["ground"], o["head"], o["reason"]) for o in row(store, i)["review_owed"]] for i in (c3, d)}
    assert owed == {c3: [(c2, c2, "flagged")], d: [(c1, c4, "revise")]}
    assert (row(store, d)["blocked"], row(store, d)["support"]) == (False, "flagged")
    assert "review owed: 3" in store.ok("status")
    refused(store, "review", c3, says=f"its flags come from {c2}")
    store.ok("review", c2)
    store.ok("review", d)
    assert {row(store, i)["support"] for i in (c2, c3, d)} == {"clean"}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("claim", "is the cache warm?"), "phrased as a question"),
        (("decide", "should we cache?"), "phrased as a question"),
        (("decide", "pick a store", "--choice", "SQLite", "--alternative", "sqlite"), "is the choice itself"),
        (("claim", "x holds", "--supports", "01zzzzzzzz"), "--supports 01zzzzzzzz"),
        (("claim", "x holds", "--state", "true"), "a new claim is"),
        (("claim", "x holds", "--depends-on", "{c}"), "only decisions have prerequisites"),
        (("claim", "x holds", "--answers", "{c}"), "only a question is answered"),
        (("decide", "do x", "--supports", "{q}"), "supports names claims or decisions"),
        (("decide", "do x", "--depends-on", "{q}"), "depends-on names claims or decisions"),
        (("decide", "do x", "--supersedes", "{c}"), "a decision supersedes only a decision"),
        (("claim", "x holds", "--supersede-reason", "restate"), "pass --supersedes ID too"),
        (
            ("claim", "x holds", "--supersedes", "{c}", "--supersede-reason", "undo"),
            "restate, revise, reverse",
        ),
        (("claim", "x holds", "--revisit", "soon"), "is not a date"),
        (("decide", "do x", "--scope", "/srv/app"), "--scope '/srv/app': give a path or glob relative"),
        (("claim", "x holds", "--choice", "a"), "belongs to decisions"),
    ],
)
def test_write_rules_refuse_with_exit_1(store: Store, args: tuple[str, ...], says: str) -> None:
    c = store.add("claim", "the API returns JSON", "--state", "accepted")
    q = store.add("question", "which format?")
    refused(store, *(a.format(c=c, q=q) for a in args), says=says)
    assert len(store.rows()) == 2


def test_relations_stay_within_one_log(store: Store) -> None:
    """A record of another project or of the workspace log is no ground here: refused, saying
    where it is and what to do."""
    store.ok("project", "add", "web")
    web = store.add(
        "claim", "the CDN caches assets", "--state", "accepted", env_extra={"SELF_PROJECT": "web"}
    )
    team = store.add("decide", "every service logs JSON lines", "--workspace")
    refused(store, "claim", "pages load fast", "--supports", web, says="that record is in projects/web")
    proc = store.run("decide", "log requests as JSON", "--depends-on", team)
    assert proc.returncode == 1, describe(proc)
    assert "that record is in the workspace log" in proc.stderr, describe(proc)
    assert "--workspace" in proc.stderr, describe(proc)
    refused(store, "claim", "x holds", "--supports", "01zzzzzzzz", says="no record has an id starting with")
    assert store.rows() == []


def test_superseding_a_superseded_record_is_refused(store: Store) -> None:
    c = store.add("claim", "one", "--state", "accepted")
    store.ok("claim", "two", "--supersedes", c, "--supersede-reason", "restate")
    refused(store, "claim", "three", "--supersedes", c, says="only a live record is superseded")


def test_pin_and_show(store: Store) -> None:
    c = store.add("claim", "never force-push main", "--state", "accepted", "--pin")
    record = row(store, c)
    assert record["pinned"] is True and record["exposure"] == "full"
    assert "- [claim] never force-push main" in store.ok("context", "--plain")
    shown = store.ok("state", "show", c)
    assert "kind: claim" in shown and "support: clean" in shown
    assert store.json("state", "show", c)["support"] == "clean"


def test_state_list_at_replays_ledger_views(store: Store) -> None:
    c1 = store.add("claim", "the API returns JSON", "--state", "accepted")
    c2 = store.add("claim", "clients parse it", "--state", "accepted", "--supports", c1)
    before = store.json("log", "-n", "1")[-1]["id"]
    store.ok("claim", "assess", c1, "--state", "rejected")
    assert row(store, c2)["support"] == "unsupported"
    past = {r["id"]: r for r in store.rows("--at", before)}
    assert (past[c1]["state"], past[c2]["support"]) == ("accepted", "clean")


def test_plain_decide_is_unchanged(store: Store) -> None:
    """A decision written without ledger flags writes the same payload as before the ledger."""
    events = store.json("decide", "store events as JSONL", "--why", "diffable")["events"]
    assert set(events[0]["payload"]) == {"entity", "text", "labels", "exposure", "scope", "priority", "why"}
    assert store.rows()[0]["state"] == "adopted"


def test_every_event_a_store_holds_validates_against_the_exported_schema(store: Store) -> None:
    import json

    import jsonschema

    schema = store.json("export", "jsonschema")
    jsonschema.Draft202012Validator.check_schema(schema)
    c1 = store.add("claim", "the API returns JSON", "--state", "accepted")
    c2 = store.add("claim", "clients parse it", "--supports", c1)
    q = store.add("question", "which format?")
    d = store.add(
        "decide", "use JSON", "--choice", "json", "--alternative", "xml", "--answers", q, "--depends-on", c1
    )
    store.ok("claim", "assess", c2, "--state", "accepted")
    store.ok("claim", "the API returns JSON, v2", "--supersedes", c1, "--supersede-reason", "revise")
    store.ok("review", c2)
    store.ok("decide", "revoke", d)
    unit = store.add("work", "write the client")
    store.ok("work", "start", unit)
    store.ok("report", unit, "first cut", "--commit", "9d2f4fc49cf782c5268b31a2e0bb8740a684c3b5")
    store.ok("work", "done", unit)
    store.ok("goal", "ship it", "--proposed")
    lines = [
        json.loads(line)
        for path in sorted(store.root.glob("**/log/*.jsonl"))
        for line in path.read_text("utf-8").splitlines()
    ]
    assert {e["type"] for e in lines} >= {
        "entity.assessed",
        "entity.reviewed",
        "entity.revoked",
        "project.added",
    }
    validator = jsonschema.Draft202012Validator(schema)
    for event in lines:
        assert validator.is_valid(event), [e.message for e in validator.iter_errors(event)]
    rows = {r["id"]: r for r in store.rows("--all")}
    for record, kind in ((c2, "claim"), (d, "decision"), (q, "question")):
        check = jsonschema.Draft202012Validator({**schema, "$ref": f"#/$defs/{kind}"})
        assert check.is_valid(rows[record]), [e.message for e in check.iter_errors(rows[record])]


def test_import_docket_keeps_ids_as_aliases(store: Store) -> None:
    import json

    ledger = store.root.parent / "ledger.jsonl"
    records = [
        {"schema": 2, "id": "c1", "kind": "claim", "text": "the API returns JSON", "state": "accepted"},
        {"schema": 2, "id": "q2", "kind": "question", "text": "which format?"},
        {
            "schema": 2,
            "id": "d3",
            "kind": "decision",
            "text": "use the stdlib",
            "supports": [["c1"]],
            "answers": ["q2"],
        },
    ]
    ledger.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    summary = store.json("import", "docket", str(ledger))
    assert (summary["records"], summary["imported"], summary["skipped"]) == (3, 3, 0)
    assert store.json("import", "docket", str(ledger))["imported"] == 0
    rows = {r["alias"]: r for r in store.rows() if "alias" in r}
    assert rows["q2"]["resolved_by"] == [rows["d3"]["id"]]
    store.ok("claim", "assess", "c1", "--state", "disputed")
    assert row(store, rows["d3"]["id"])["support"] == "flagged"
    assert store.json("state", "show", "d3")["alias"] == "d3"
    ledger.write_text(
        json.dumps({"id": "c9", "kind": "claim", "text": "x", "supports": [["c7"]]}) + "\n", "utf-8"
    )
    refused(store, "import", "docket", str(ledger), says="c7 names no record earlier")


def test_question_check(store: Store) -> None:
    q = store.add(
        "question",
        "json or cbor?",
        "--option",
        "json=parse with the stdlib",
        "--option",
        "cbor=parse with the stdlib",
    )
    assert store.json("question", "check", q)["moot"] is True
    assert "moot" in store.ok("question", "check", q)
    context = store.ok("context", "--plain")
    assert "json or cbor?" not in context and "1 moot question left out" in context
    assert "moot questions: 1" in store.ok("status")
    assert [r["record"] for r in store.json("status")["moot"]] == [q]
    live = store.add(
        "question", "sqlite or postgres?", "--option", "sqlite=embed", "--option", "postgres=run a server"
    )
    assert "worth asking" in store.ok("question", "check", live)
    refused(store, "question", "check", store.add("question", "why?"), says="declares 0 candidate answer")


def test_work_parallel(store: Store) -> None:
    api = store.add("work", "the api", "--reads", "docs/**", "--writes", "src/api/*.py")
    client = store.add("work", "the client", "--reads", "src/api/models.py", "--writes", "src/client/**")
    docs = store.add("work", "the docs", "--writes", "README.md")
    assert store.json("work", "parallel", api, docs)["commute"] is True
    doc = store.json("work", "parallel", api, client, docs)
    assert doc["commute"] is False and doc["conflicts"][0]["path"] == "src/api/*.py"
    assert "do not run these in parallel" in store.ok("work", "parallel", api, client)
    refused(store, "goal", "x", "--reads", "a", says="belong to work units")


def test_gate_answers_a_pre_tool_use_hook(store: Store) -> None:
    import json

    def ask(tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        hook = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}
        doc = json.loads(store.ok("gate", input=json.dumps(hook)))
        assert doc["decision"] in ("allow", "deny", "ask") and doc["reason"]
        return doc

    assert ask("Bash", {"command": "git push --force origin main"})["decision"] == "ask"
    policy = store.add(
        "decide", "never force-push", "--gate", "deny", "--tool", "Bash", "--pattern", "git push*--force*"
    )
    denied = ask("Bash", {"command": "git push --force origin main"})
    assert (denied["decision"], denied["policy"]) == ("deny", policy)
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert ask("Edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"})["decision"] == "allow"
    rulings = (store.root / ".local" / "gate.jsonl").read_text("utf-8").splitlines()
    assert len(rulings) == 3 and json.loads(rulings[-1])["decision"] == "allow"
    garbled = json.loads(store.ok("gate", input="not json"))
    assert garbled["decision"] == "ask"


def test_work_outcome_compares_intended_and_realized_files(store: Store) -> None:
    from dulwich import porcelain

    checkout = store.root.parent / "checkout"
    (checkout / "src").mkdir(parents=True)
    (checkout / "src" / "api.py").write_text("a\n", "utf-8")
    (checkout / "README.md").write_text("r\n", "utf-8")
    repo = porcelain.init(str(checkout))
    identity = b"Test <test@example.invalid>"
    porcelain.add(repo, [str(checkout / "src" / "api.py"), str(checkout / "README.md")])
    porcelain.commit(repo, b"init", author=identity, committer=identity)
    store.ok("project", "link", "app", str(checkout))
    unit = store.add("work", "the api", "--intends", "src/**", "--intends", "docs/**")
    refused(store, "work", "outcome", unit, says="has no start commit")
    store.ok("work", "start", unit)
    (checkout / "src" / "api.py").write_text("b\n", "utf-8")
    (checkout / "setup.cfg").write_text("s\n", "utf-8")
    porcelain.add(repo, [str(checkout / "src" / "api.py"), str(checkout / "setup.cfg")])
    porcelain.commit(repo, b"work", author=identity, committer=identity)
    store.ok("work", "done", unit, "--report", "api written")
    doc = store.json("work", "outcome", unit)
    assert doc["done"] is True
    assert (doc["intentional"], doc["unintentional"], doc["unrealized"]) == (
        ["src/api.py"],
        ["setup.cfg"],
        ["docs/**"],
    )
    assert "unintentional: setup.cfg" in store.ok("work", "outcome", unit)


def test_a_committed_checkout_marker_is_not_an_outcome(store: Store) -> None:
    from dulwich import porcelain

    checkout = store.root.parent / "checkout"
    checkout.mkdir()
    (checkout / "a.py").write_text("a\n", "utf-8")
    repo = porcelain.init(str(checkout))
    identity = b"Test <test@example.invalid>"
    porcelain.add(repo, [str(checkout / "a.py")])
    porcelain.commit(repo, b"init", author=identity, committer=identity)
    store.ok("project", "link", "app", str(checkout))
    unit = store.add("work", "edit a", "--intends", "a.py")
    store.ok("work", "start", unit)
    (checkout / "a.py").write_text("b\n", "utf-8")
    marker = [p.name for p in checkout.iterdir() if p.name.startswith(".self")]
    assert marker, "project link wrote no marker"
    porcelain.add(repo, [str(checkout / "a.py"), *(str(checkout / m) for m in marker)])
    porcelain.commit(repo, b"work and the marker", author=identity, committer=identity)
    doc = store.json("work", "outcome", unit)
    assert (doc["realized"], doc["unintentional"]) == (["a.py"], [])


def test_export_parquet_writes_one_row_per_decision(store: Store) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    c = store.add("claim", "the API returns JSON", "--state", "accepted")
    d = store.add(
        "decide", "parse with the stdlib", "--choice", "stdlib", "--alternative", "orjson", "--supports", c
    )
    store.ok("decide", "revoke", d)
    store.ok("decide", "use orjson after all")
    out = store.root.parent / "decisions.parquet"
    assert store.json("export", "parquet", str(out))["rows"] == 2
    table = pq.read_table(out).to_pylist()
    by_id = {row["id"]: row for row in table}
    assert by_id[d]["outcome"] == "revoked" and by_id[d]["supports"] == [[c]]
    assert by_id[d]["alternatives"] == ["orjson"]
