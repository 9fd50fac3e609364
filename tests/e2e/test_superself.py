"""A real Superself store imports to the same live records, counts, and context choices."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tests.support.samples import SUPERSELF_SAMPLE as SAMPLE
from tests.support.selfrun import Store

ROW = re.compile(r"^(\S+)  (\S+)  (full|index|search)(?: p(\d+))?  (.*?)(  \(proposed\))?$")


def expected(name: str) -> str:
    return (SAMPLE / "expected" / name).read_text("utf-8")


def expected_rows() -> dict[str, dict[str, object]]:
    rows = {}
    for line in expected("state-list.txt").splitlines():
        match = ROW.match(line)
        if match:
            ident, label, exposure, priority, text, proposed = match.groups()
            rows[ident] = {
                "labels": [] if label == "-" else [label],
                "exposure": exposure,
                "priority": None if priority is None else int(priority),
                "text": text,
                "proposed": bool(proposed),
            }
    assert len(rows) == 12, f"expected/state-list.txt parsed to {len(rows)} rows"
    return rows


def sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {title.strip().lower(): body for title, body in zip(parts[1::2], parts[2::2], strict=True)}


def test_import_matches_the_superself_outputs(fresh: Store, tmp_path: Path) -> None:
    copy = tmp_path / "superself"
    shutil.copytree(SAMPLE / "store", copy)
    imported = fresh.json("import", "superself", str(copy))
    assert imported["projects"] == {"app": 22}, imported
    fresh.project = "app"

    want = expected_rows()
    got = fresh.by_id()
    assert set(got) == set(want), f"live ids differ: {sorted(set(got) ^ set(want))}"
    for ident, row in want.items():
        mine = got[ident]
        assert (mine["labels"], mine["exposure"], mine["priority"], mine["text"]) == (
            row["labels"],
            row["exposure"],
            row["priority"],
            row["text"],
        ), (ident, mine)
        assert (mine["status"] == "proposed") == row["proposed"], (ident, mine["status"])
    assert got["o-vjaax"]["target"] == "2099-03-31"

    status = fresh.json("status")
    text = expected("status.txt")
    work = re.search(r"work: (\d+) active, (\d+) blocked, (\d+) next, (\d+) done", text)
    objectives = re.search(
        r"objectives: (\d+) open, (\d+) of (\d+) milestones reached, "
        r"(\d+) of (\d+) exit criteria covered",
        text,
    )
    waiting = re.search(r"waiting on you: (\d+)", text)
    process = re.search(r"process (\S+): (.+)", text)
    assert work and objectives and waiting and process, text
    assert [status["work"][k] for k in ("active", "blocked", "next", "done")] == [
        int(n) for n in work.groups()
    ]
    assert [
        status[k]
        for k in (
            "objectives_open",
            "milestones_reached",
            "milestones_total",
            "criteria_covered",
            "criteria_total",
        )
    ] == [int(n) for n in objectives.groups()]
    assert status["waiting"] == int(waiting.group(1))
    assert {p["work"]: p["state"] for p in status["processes"]} == {process.group(1): process.group(2)}

    context = fresh.ok("context", "--plain")
    shown = expected("context.txt")
    for ident, row in want.items():
        text = str(row["text"])
        assert (text in context) == (text in shown), (
            f"{ident} {text!r} is {'shown' if text in shown else 'hidden'} by Superself "
            f"but not by us:\n{context}"
        )
    mine, theirs = sections(context), sections(shown)
    for title in ("waiting on you", "deadlines"):
        assert title in mine, f"our context has no {title!r} section:\n{context}"
        for ident, row in want.items():
            if str(row["text"]) in theirs[title]:
                assert str(row["text"]) in mine[title], (title, ident, context)
    assert "add a cache" in mine["waiting on you"] and "2099-03-31" in mine["deadlines"]


PRE_CUTOVER = SAMPLE.parents[1] / "superself-legacy" / "pre-cutover"


def test_import_of_a_pre_cutover_store_reads_as_superself_read_it(fresh: Store, tmp_path: Path) -> None:
    """Superself's own fixture of a store written before its entity cutover: the legacy kinds
    fold to the records, statuses, targets and waiting items Superself printed for it."""
    copy = tmp_path / "superself"
    shutil.copytree(PRE_CUTOVER / "store", copy)
    assert fresh.json("import", "superself", str(copy))["projects"] == {"demo": 46}
    fresh.project = "demo"
    printed = {
        name: (PRE_CUTOVER / "expected" / f"{name}.txt").read_text("utf-8")
        for name in ("state-list", "work-list", "status", "context")
    }
    state_ids = {line.split("  ")[0] for line in printed["state-list"].splitlines()}
    work_ids = {line.split("  ")[0] for line in printed["work-list"].splitlines() if line.startswith("w-")}
    got = fresh.by_id()
    assert set(got) == state_ids | work_ids | {"01kz41h20mtyytk9dt7ay013bd"}, sorted(got)
    assert got["o-tvmtf"]["target"] == "2099-06-30" and got["o-93cg3"]["status"] == "proposed"

    every = fresh.by_id("--all")
    assert every["01kz41gd13hbqebt8h12mhqk4d"]["status"] == "retracted"  # decision.declined
    assert every["o-pwwrs"]["status"] == "retracted"  # objective.closed as dropped
    assert every["w-8x0th"]["execution"] == "done"
    assert "Evidence notes: checksum abc123" in (PRE_CUTOVER / "expected" / "work-show-done.txt").read_text()
    assert "delivered as planned (checksum abc123)" in fresh.ok("work", "show", "w-8x0th")

    status = fresh.json("status")
    counted = r"work: (\d+) active, (\d+) blocked, (\d+) next, (\d+) done, (\d+) retired"
    work = re.search(counted, printed["status"])
    progress = r"objectives: (\d+) open, (\d+) of (\d+) milestones reached, (\d+) of (\d+)"
    objectives = re.search(progress, printed["status"])
    assert work and objectives
    kinds = ("active", "blocked", "next", "done", "retired")
    assert [status["work"][k] for k in kinds] == [int(n) for n in work.groups()]
    assert work.group(0) in fresh.ok("status").splitlines()
    keys = ("objectives_open", "milestones_reached", "milestones_total", "criteria_covered", "criteria_total")
    assert [status[k] for k in keys] == [int(n) for n in objectives.groups()]
    assert status["health"] == []

    context = fresh.ok("context", "--plain")
    mine, theirs = sections(context), sections(printed["context"])
    waiting = {  # what Superself's row names → the text of the record ours names
        "later maybe": "later maybe",
        "w-0q8c9": "needs a ruling",
        "a proposed direction": "a proposed direction",
        "proposed raw": "proposed raw",
        "e-cyxv4": "raw standing note",
    }
    assert len(theirs["waiting on you"].strip().split("\n- ")) == len(waiting)
    for token, text in waiting.items():
        assert token in theirs["waiting on you"], token
        assert text in mine["waiting on you"], (text, context)
    assert status["waiting"] == len(waiting)
    assert "w-0q8c9 is waiting on a decision: pricing undecided" in theirs["waiting on you"]
    assert "needs a ruling waits on a decision: pricing undecided" in mine["waiting on you"]
    assert fresh.by_id()["w-0q8c9"]["pending"] is False  # waiting, but nothing to confirm
    for text in ("first direction", "ship weekly", "temp rule", "maybe queue", "tabs everywhere", "dead end"):
        assert text not in context, (text, context)
    assert "2099-06-30" in mine["deadlines"] and "2099-01-01" in mine["deadlines"]


def test_an_archive_superself_wrote_in_the_project_log_comes_over(fresh: Store, tmp_path: Path) -> None:
    """Superself archived a project with `project.archived {project, why}` in that project's
    own log (and `project.restored {project}` brought it back; the last one by time stands).
    Every line is imported, none skipped, and the workspace knows which project is archived."""
    copy = tmp_path / "superself"
    shutil.copytree(PRE_CUTOVER / "store", copy)
    (copy / "registry.jsonl").write_text(
        '{"slug":"demo","added":"2026-08-03T14:47:31.241Z"}\n{"slug":"back","added":"2026-08-03T14:47:31.241Z"}\n'
    )
    lines = {
        "demo": [("01kz41h8000000000000000000", "project.archived", '{"project":"demo","why":"paused"}')],
        "back": [
            ("01kz41h8000000000000000001", "project.archived", '{"project":"back","why":"paused"}'),
            ("01kz41h8000000000000000002", "project.restored", '{"project":"back"}'),
        ],
    }
    for slug, events in lines.items():
        log = copy / "projects" / slug / "log.jsonl"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a") as out:
            for ident, kind, payload in events:
                out.write(
                    f'{{"id":"{ident}","ts":"2026-08-03T14:48:05.000Z","type":"{kind}",'
                    f'"origin":{{"actor":"human","confirmed":true}},"project":"{slug}","payload":{payload}}}\n'
                )
    imported = fresh.json("import", "superself", str(copy))
    assert imported["projects"] == {"demo": 47, "back": 2} and imported["skipped_lines"] == {}, imported
    projects = {row["slug"]: row for row in fresh.json("project", "list")}
    assert (projects["demo"]["archived"], projects["back"]["archived"]) == (True, False), projects
    fresh.project = "demo"
    assert fresh.json("status")["health"] == []


ENTITY_ERA = SAMPLE.parents[1] / "superself-legacy" / "entity-era"


def import_entity_era(fresh: Store, tmp_path: Path) -> dict[str, object]:
    copy = tmp_path / "superself"
    shutil.copytree(ENTITY_ERA / "store", copy)
    imported: dict[str, object] = fresh.json("import", "superself", str(copy))
    fresh.project = "app"
    return imported


def test_an_entity_era_reach_imports_as_reached(fresh: Store, tmp_path: Path) -> None:
    """Superself's `milestone reach` and `objective close --as reached` wrote `entity.done`
    without evidence; after import they read as reached, as Superself showed them."""
    import_entity_era(fresh, tmp_path)
    every = fresh.by_id("--all")
    assert [every[i]["execution"] for i in ("m-9hcf7", "m-f3w89", "o-j69b4")] == ["done"] * 3
    status = fresh.json("status")
    assert status["health"] == [] and status["objectives_open"] == 0
    # Superself's status counts only the milestones of open objectives: none here
    assert (status["milestones_reached"], status["milestones_total"]) == (0, 0)
    theirs = (ENTITY_ERA / "expected" / "status.txt").read_text().splitlines()
    ours = fresh.ok("status").splitlines()
    assert theirs[1:3] == ours[1:3], (theirs, ours)
    printed = (ENTITY_ERA / "expected" / "milestone-list.txt").read_text()
    assert printed.count("  reached  ") == 2


def test_an_entity_era_undo_imports_as_taken_back(fresh: Store, tmp_path: Path) -> None:
    """Superself's `self undo` of a withdrawal, a supersession and a retirement: after import
    the records stand, and `self state list` names the records Superself's listed."""
    import_entity_era(fresh, tmp_path)
    printed = (ENTITY_ERA / "expected" / "state-list.txt").read_text().splitlines()[:-1]
    rows = {ident: row for ident, row in fresh.by_id().items() if row["scope"] in ("project", "workspace")}
    assert set(rows) == {line.split()[0] for line in printed}
    every = fresh.by_id("--all")
    assert (every["e-8va92"]["status"], every["e-f334p"]["status"]) == ("confirmed", "confirmed")
    assert every["e-9rx56"]["execution"] == "in-progress"


def test_a_record_scoped_to_another_project_imports_and_renders_there(fresh: Store, tmp_path: Path) -> None:
    """Superself's `state add --scope other` in app's log: read, not skipped; it renders in
    other's context (as `self state --project other` listed it in Superself), not in app's."""
    imported = import_entity_era(fresh, tmp_path)
    assert imported["skipped_lines"] == {}, imported
    assert "shared lint rules" not in fresh.ok("context", "--plain")
    fresh.project = "other"
    assert "shared lint rules" in fresh.ok("context", "--plain")
