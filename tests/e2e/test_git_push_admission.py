"""A `git push` to the service obeys what `POST …/events` obeys: every appended event passes the
same admission (a done needs its evidence, no import mark or voucher), only files of mode
100644 are taken, and the pushing token's user is the author of record beside the one an
event claims. Driven by the real git program against a real `self serve` process."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.adapters.store import Store
from service.core.events.events import Origin, Payload, canonical, make
from tests.support import gitclient as gc
from tests.support.forge import forge
from tests.support.selfrun import base_env, describe, run_self
from tests.support.serving import Listener, Service, admin, token

WS, SLUG = "acme", "app"
TS = "2026-01-05T10:00:00.000Z"


class Hosted:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.data = tmp / "data"
        admin(self.data, "workspace", "add", WS)
        admin(self.data, "user", "add", "ann")
        admin(self.data, "user", "add", "ben")
        self.ann = token(self.data, "ann", WS, "writer")
        self.ben = token(self.data, "ben", WS, "writer")
        admin(self.data, "user", "add", "ada")
        self.ada = token(self.data, "ada", WS, "admin")
        self.cli("project", "add", SLUG)
        self.cli("goal", "add", "hold every push to what a post obeys")
        self.service = Service(self.data, tmp / "serve.log")
        self.service.wait("/readyz")
        self.clones = 0

    @property
    def store(self) -> Path:
        return self.data / "workspaces" / WS

    def cli(self, *args: str) -> str:
        env = base_env() | {"SELF_WORKSPACE": str(self.store), "SELF_PROJECT": SLUG}
        proc = run_self(args, env)
        assert proc.returncode == 0, describe(proc)
        return proc.stdout

    def unit(self, text: str) -> str:
        """A work unit in progress, written into the hosted store by the CLI."""
        made = json.loads(self.cli("work", "add", text, "--json"))
        unit = str(made["events"][0]["payload"]["entity"])
        self.cli("work", "start", unit)
        return unit

    def clone(self, secret: str) -> Path:
        self.events()  # what the CLI wrote is folded before the clone
        self.clones += 1
        target = self.tmp / f"clone{self.clones}"
        gc.ok(self.tmp, "clone", "-q", gc.url(self.service.url, secret, WS), str(target))
        return target

    def head(self) -> str | None:
        with Store.open(self.store) as store:
            return store.head()

    def events(self) -> dict[str, dict[str, Any]]:
        with self.service.client(self.ann) as client:
            answer = client.get(f"/api/v1/workspaces/{WS}/projects/{SLUG}/events", params={"limit": 10_000})
            assert answer.status_code == 200, answer.text
            return {e["id"]: e for e in answer.json()["events"]}

    def push(self, clone: Path, lines: list[bytes]) -> Any:
        gc.append(clone, SLUG, lines)
        gc.ok(self.tmp, "commit", "-qam", "pushed", cwd=clone)
        return gc.git(self.tmp, "push", "origin", "main", cwd=clone)


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hosted]:
    made = Hosted(tmp_path_factory.mktemp("admission"))
    yield made
    assert made.service.stop() == 0


def event(
    kind: str,
    payload: Payload,
    by: str | None = "ann",
    refs: dict[str, object] | None = None,
    event_id: str | None = None,
) -> bytes:
    made = event_id or gc.new_id()
    return canonical(make(made, TS, kind, Origin("human", True, by=by), SLUG, payload, refs))


def report_and_done(unit: str, text: str) -> tuple[bytes, bytes]:
    """A report with a commit, then the done it earns: two ids in that order."""
    from service.core.events.events import EntityWhy, ReportAdded

    first, second = sorted(gc.new_id() for _ in range(2))
    report = event("report.added", ReportAdded(text, work=unit, commit="0" * 40), event_id=first)
    return report, event("entity.done", EntityWhy(unit), event_id=second)


def _id(line: bytes) -> str:
    return str(json.loads(line)["id"])


def _refused(hosted: Hosted, clone: Path, lines: list[bytes]) -> str:
    before, held = hosted.head(), hosted.events()
    pushed = hosted.push(clone, lines)
    assert pushed.returncode != 0, pushed.stderr
    assert hosted.head() == before and hosted.events() == held
    assert not list((hosted.store / ".git" / "objects").glob("incoming-*")), "no pack kept"
    return pushed.stderr


def test_a_done_without_evidence_is_refused_naming_the_event(hosted: Hosted) -> None:
    from service.core.events.events import EntityWhy

    unit = hosted.unit("close me without proof")
    clone = hosted.clone(hosted.ann)
    done = event("entity.done", EntityWhy(unit))
    said = _refused(hosted, clone, [done])
    assert "remote: " in said and _id(done) in said, said
    assert "evidence" in said, said


def test_a_done_after_a_report_in_the_same_push_is_taken(hosted: Hosted) -> None:
    from service.core.events.events import EntityWhy, ReportAdded

    unit = hosted.unit("close me with proof")
    clone = hosted.clone(hosted.ann)
    report = event("report.added", ReportAdded("the build passes", work=unit, artifact="ci/build-41"))
    done = event("entity.done", EntityWhy(unit))
    pushed = hosted.push(clone, [report, done])
    assert pushed.returncode == 0, pushed.stderr
    assert {_id(report), _id(done)} <= set(hosted.events())


def test_an_import_mark_and_a_voucher_are_refused(hosted: Hosted) -> None:
    from service.core.events.events import Assertion, Vouched

    clone = hosted.clone(hosted.ann)
    marked = event("entity.proposed", Assertion(gc.new_id(), "imported?", ("idea",)), refs={"imported": "x"})
    said = _refused(hosted, clone, [marked])
    assert _id(marked) in said and "imported" in said, said
    clone = hosted.clone(hosted.ann)
    voucher = event("import.superself", Vouched((gc.new_id(),)))
    said = _refused(hosted, clone, [voucher])
    assert _id(voucher) in said, said


def test_a_workspace_admin_may_push_an_imported_stores_history(hosted: Hosted) -> None:
    from service.core.events.events import Assertion, EntityWhy, Vouched

    clone = hosted.clone(hosted.ada)
    record = gc.new_id()
    voucher_id, marked_id, done_id = sorted(gc.new_id() for _ in range(3))
    marked = canonical(
        make(
            marked_id,
            TS,
            "entity.proposed",
            Origin("human", True, by="ann"),
            SLUG,
            Assertion(record, "brought by an import", ("task",)),
            {"imported": "superself"},
        )
    )
    done = canonical(
        make(
            done_id,
            TS,
            "entity.done",
            Origin("human", True, by="ann"),
            SLUG,
            EntityWhy(record),
            {"imported": "superself"},
        )
    )
    voucher = canonical(
        make(voucher_id, TS, "import.superself", Origin("human", True, by="ann"), SLUG, Vouched((done_id,)))
    )
    pushed = hosted.push(clone, [voucher, marked, done])
    assert pushed.returncode == 0, pushed.stderr
    assert {voucher_id, marked_id, done_id} <= set(hosted.events())


def test_an_offline_done_meets_a_retraction_written_after_it_and_is_taken(hosted: Hosted) -> None:
    """Ann closed the unit offline (her ids are older); Ben retracted it meanwhile. Refused, her
    store could never sync again: her log is only ever appended to. Taken, the fold rules."""
    unit = hosted.unit("closed offline, retracted meanwhile")
    report, done = report_and_done(unit, "done on the train")
    time.sleep(0.01)  # the retraction's id is after the offline ones (ids are dated to the ms)
    hosted.cli("work", "retract", unit, "--why", "not needed")
    clone = hosted.clone(hosted.ann)
    pushed = hosted.push(clone, [report, done])
    assert pushed.returncode == 0, pushed.stderr
    assert {_id(report), _id(done)} <= set(hosted.events())


def test_a_done_written_after_a_retraction_is_refused(hosted: Hosted) -> None:
    unit = hosted.unit("retracted, then closed")
    hosted.cli("work", "retract", unit, "--why", "not needed")
    time.sleep(0.01)  # the done's id is after the retraction's
    clone = hosted.clone(hosted.ann)
    report, done = report_and_done(unit, "too late")
    said = _refused(hosted, clone, [report, done])
    assert _id(done) in said and "retracted" in said, said


def test_a_relayed_event_is_kept_with_who_pushed_it(hosted: Hosted) -> None:
    from service.core.events.events import Assertion

    clone = hosted.clone(hosted.ben)
    listener = Listener(hosted.service, hosted.ann, workspace=WS)
    time.sleep(0.2)  # subscribed before the push
    anns = event("entity.proposed", Assertion(gc.new_id(), "written by ann offline", ("idea",)), by="ann")
    bens = event("entity.proposed", Assertion(gc.new_id(), "written by ben", ("idea",)), by="ben")
    pushed = hosted.push(clone, [anns, bens])
    assert pushed.returncode == 0, pushed.stderr
    served = hosted.events()
    assert served[_id(anns)]["origin"]["by"] == "ann" and served[_id(anns)]["pushed_by"] == "ben"
    assert "pushed_by" not in served[_id(bens)]
    streamed = {data["id"]: data for _, data in listener.until(2)}
    listener.close()
    assert streamed[_id(anns)]["pushed_by"] == "ben" and "pushed_by" not in streamed[_id(bens)]
    logged = json.loads(hosted.cli("log", "--json"))
    assert {r["id"]: r.get("pushed_by") for r in logged}[_id(anns)] == "ben"
    shown = json.loads(
        hosted.cli("state", "show", json.loads(anns)["payload"]["entity"], "--history", "--json")
    )
    assert [e.get("pushed_by") for e in shown["history"]] == ["ben"]


def test_an_event_without_an_author_is_the_pushers(hosted: Hosted) -> None:
    from service.core.events.events import Assertion

    clone = hosted.clone(hosted.ben)
    nobody = event("entity.proposed", Assertion(gc.new_id(), "whose is this", ("idea",)), by=None)
    pushed = hosted.push(clone, [nobody])
    assert pushed.returncode == 0, pushed.stderr
    served = hosted.events()[_id(nobody)]
    assert "by" not in served["origin"] and served["pushed_by"] == "ben"


def test_an_executable_segment_is_refused_naming_its_path(hosted: Hosted) -> None:
    clone = hosted.clone(hosted.ann)
    segment = clone / "projects" / SLUG / "log" / "000000.jsonl"
    made, line = gc.event(SLUG, "executable")
    parts = tuple(p.encode() for p in ("projects", SLUG, "log", "000000.jsonl"))
    forge(clone, {parts: (0o100755, segment.read_bytes() + line)})
    before, held = hosted.head(), hosted.events()
    pushed = gc.git(hosted.tmp, "push", "origin", "main", cwd=clone)
    assert pushed.returncode != 0, pushed.stderr
    assert hosted.head() == before and hosted.events() == held and made not in held
    assert "remote:" in pushed.stderr and "projects/app/log/000000.jsonl" in pushed.stderr, pushed.stderr
    assert "100755" in pushed.stderr, pushed.stderr


def test_the_feed_cursor_returns_a_pushed_event_older_than_it(hosted: Hosted) -> None:
    """Written offline before a newer post, pushed after a reader's cursor passed the post: the
    next page from that cursor holds it, once."""
    from service.core.events.events import Assertion

    older = event("entity.proposed", Assertion(gc.new_id(), "written offline, pushed later", ("idea",)))
    pages = f"/api/v1/workspaces/{WS}/projects/{SLUG}/events"
    posted = {"type": "entity.confirmed", "project": SLUG, "payload": {"text": "posted", "labels": ["idea"]}}
    with hosted.service.client(hosted.ann) as client:
        answer = client.post(f"/api/v1/workspaces/{WS}/events", json={"events": [posted]})
        assert answer.status_code == 201, answer.text
        page = client.get(pages, params={"limit": 10_000}).json()
        assert page["events"][-1]["id"] == answer.json()["ids"][0]
        clone = hosted.clone(hosted.ann)
        pushed = hosted.push(clone, [older])
        assert pushed.returncode == 0, pushed.stderr
        later = client.get(pages, params={"after": page["cursor"]}).json()
        assert [e["id"] for e in later["events"]] == [_id(older)]
        assert client.get(pages, params={"after": later["cursor"]}).json()["events"] == []
