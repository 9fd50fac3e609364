"""Writes through a real `self serve` process: events posted as they are, read back through
the CLI on the same store; retries, refusals, the log since an id, the live stream, many
writers at once, a kill -9 in the middle of writes, and a stop with streams open."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.adapters.store import Store
from service.core.events import ids
from tests.support.selfrun import base_env, describe, run_self
from tests.support.serving import Listener, Service, admin, token

WS, SLUG = "acme", "web"
EVENTS = f"/api/v1/workspaces/{WS}/events"
PROBLEM = "application/problem+json"


class Team:
    def __init__(self, data: Path, service: Service, writer: str, reader: str) -> None:
        self.data, self.service, self.writer, self.reader = data, service, writer, reader

    @property
    def store(self) -> Path:
        return self.data / "workspaces" / WS

    def cli(self, *args: str) -> str:
        env = base_env() | {"SELF_WORKSPACE": str(self.store), "SELF_PROJECT": SLUG}
        proc = run_self(args, env)
        assert proc.returncode == 0, describe(proc)
        return proc.stdout

    def post(self, events: list[dict[str, Any]], secret: str | None = None, **kw: Any) -> httpx.Response:
        with self.service.client(secret or self.writer) as client:
            return client.post(EVENTS, json={"events": events}, **kw)

    def get(self, path: str, **kw: Any) -> httpx.Response:
        with self.service.client(self.reader) as client:
            return client.get(path, **kw)

    def head(self) -> str | None:
        with Store.open(self.store) as store:
            return store.head()


def make_team(tmp: Path) -> Team:
    data = tmp / "data"
    admin(data, "workspace", "add", WS)
    admin(data, "user", "add", "ann")
    writer, reader = token(data, "ann", WS, "writer"), token(data, "ann", WS, "reader")
    team = Team(data, Service(data, tmp / "serve.log"), writer, reader)
    team.cli("project", "add", SLUG, "--desc", "the web app")
    team.service.wait("/readyz")
    return team


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    made = make_team(tmp_path_factory.mktemp("writes"))
    yield made
    assert made.service.stop() == 0


def note(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "entity.confirmed",
        "project": SLUG,
        "payload": {"text": text, "labels": ["idea"]},
        **extra,
    }


def logged(store: Path) -> list[dict[str, Any]]:
    """Every event line of every committed log file of the store."""
    with Store.open(store) as opened:
        return [{"_id": e.id, "type": e.type} for log in opened.logs() for e in opened.read(log).events]


def test_a_post_is_written_with_the_services_id_time_and_user(team: Team) -> None:
    answer = team.post([note("cache the context"), note("index the logs")])
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert len(body["ids"]) == 2 and body["ids"] == sorted(body["ids"]) and body["commit"] == team.head()
    rows = json.loads(team.cli("state", "list", "--json"))
    made = {r["id"]: r for r in rows if r["text"] in ("cache the context", "index the logs")}
    assert set(made) == set(body["ids"]), "a new record's entity is its event's id, as the CLI writes it"
    shown = json.loads(team.cli("state", "show", body["ids"][0], "--history", "--json"))
    assert shown["history"][0]["origin"]["by"] == "ann" and shown["history"][0]["ts"].endswith("Z")


def test_a_retried_post_with_ids_is_written_once(team: Team) -> None:
    first = team.post([note("first try")])
    given = first.json()["ids"][0]
    later = team.post([note("next")]).json()["ids"][0]
    mine = ids.next_id(later, 0, 5)  # a client's own id, after the log's last
    again = [team.post([note("with my id", id=mine)]) for _ in range(3)]
    assert [a.status_code for a in again] == [201, 200, 200], [a.text for a in again]
    assert {a.json()["ids"][0] for a in again} == {mine} and again[1].json()["replayed"] is True
    assert sum(1 for e in logged(team.store) if e["_id"] == mine) == 1
    taken = team.post([note("other content", id=mine)])
    assert taken.status_code == 409 and taken.json()["code"] == "exists", taken.text
    assert taken.json()["field"] == "events[0].id"
    assert given in {e["_id"] for e in logged(team.store)}


BAD = [
    ("not json", b"{events: [", 400, "malformed"),
    ("no events", b'{"events": []}', 422, "missing-value"),
    ("wrong shape", b'{"events": [{"type": "entity.confirmed"}]}', 400, "malformed"),
    ("unknown key", b'{"events": [], "x": 1}', 400, "malformed"),
    ("time given", json.dumps({"events": [note("x") | {"ts": "2026-01-01T00:00:00.000Z"}]}), 422, None),
    (
        "origin given",
        json.dumps({"events": [note("x") | {"origin": {"actor": "human", "by": "eve"}}]}),
        422,
        None,
    ),
    ("unknown type", json.dumps({"events": [{"type": "x.y", "project": SLUG, "payload": {}}]}), 422, None),
    ("unknown project", json.dumps({"events": [note("x") | {"project": "nope"}]}), 404, "not-found"),
    ("local path", json.dumps({"events": [note("see /home/ann/secret-notes.txt")]}), 422, "sanitize"),
    ("secret", json.dumps({"events": [note("token ghp_" + "a" * 36)]}), 422, "sanitize"),
    ("future id", json.dumps({"events": [note("x", id="7" + "0" * 25)]}), 422, None),
    ("bad id", json.dumps({"events": [note("x", id="../../etc")]}), 422, None),
    ("too many", json.dumps({"events": [note(f"n{i}") for i in range(1001)]}), 413, "too-large"),
]


@pytest.mark.parametrize(("case", "body", "status", "code"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_post_is_a_clear_4xx_and_writes_nothing(
    team: Team, case: str, body: bytes | str, status: int, code: str | None
) -> None:
    before = team.head()
    with team.service.client(team.writer) as client:
        answer = client.post(EVENTS, content=body, headers={"content-type": "application/json"})
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == PROBLEM
    doc = answer.json()
    assert doc["status"] == status and doc["detail"]
    if code is not None:
        assert doc["code"] == code
    assert "/home/ann" not in answer.text and "ghp_" not in answer.text, "a refusal never echoes the value"
    assert team.head() == before, "nothing written"


def test_a_reader_cannot_post(team: Team) -> None:
    before = team.head()
    answer = team.post([note("by a reader")], secret=team.reader)
    assert answer.status_code == 403 and team.head() == before


def test_events_after_an_id_page_through_the_log(team: Team) -> None:
    ids = team.post([note(f"paged {i}") for i in range(5)]).json()["ids"]
    path = f"/api/v1/workspaces/{WS}/projects/{SLUG}/events"
    page = team.get(path, params={"after": ids[0], "limit": 2}).json()
    assert [e["id"] for e in page["events"]] == ids[1:3] and page["next"] == ids[2]
    rest = team.get(path, params={"after": page["next"]}).json()
    assert [e["id"] for e in rest["events"]][:2] == ids[3:] and rest["next"] is None
    everything = team.get(path, params={"limit": 10_000}).json()["events"]
    assert [e["id"] for e in everything] == sorted(e["id"] for e in everything)
    assert everything[-1]["id"] == ids[-1]
    for bad in ({"limit": 0}, {"limit": 10**9}, {"after": "nope"}):
        answer = team.get(path, params=bad)
        assert answer.status_code in (400, 422) and answer.headers["content-type"] == PROBLEM, bad


def test_the_stream_sends_each_committed_event_and_resumes_by_last_event_id(team: Team) -> None:
    listener = Listener(team.service, team.reader)
    time.sleep(0.2)  # the subscription is registered before the first post
    ids = team.post([note("streamed one"), note("streamed two")]).json()["ids"]
    got = [(i, d) for i, d in listener.until(3, seconds=3) if d["id"] in ids]  # and the CLI's project
    listener.close()
    assert [d["id"] for _, d in got] == ids and all(i not in ids for i, _ in got), "the SSE id is a cursor"
    assert got[0][1]["payload"]["text"] == "streamed one" and got[0][1]["origin"]["by"] == "ann"
    later = team.post([note("while away")]).json()["ids"]
    resumed = Listener(team.service, team.reader, last=ids[0])
    seen = resumed.until(2)
    resumed.close()
    assert [i for i, _ in seen] == [ids[1], *later]
    old = Listener(team.service, team.reader, last="0" * 26)  # before everything: read from the logs
    assert len(old.until(len(logged(team.store)))) >= len(logged(team.store)) - 1
    old.close()


def test_sixteen_writers_lose_nothing_and_share_commits(team: Team) -> None:
    before = team.head()
    with Store.open(team.store) as store:
        commits_before = sum(1 for _ in store.repo.get_walker())

    def write(n: int) -> list[str]:
        out: list[str] = []
        with team.service.client(team.writer) as client:
            for i in range(10):
                answer = client.post(EVENTS, json={"events": [note(f"writer {n} event {i}")]})
                assert answer.status_code == 201, answer.text
                out += answer.json()["ids"]
        return out

    with ThreadPoolExecutor(16) as pool:
        acked = [i for ids in pool.map(write, range(16)) for i in ids]
    assert len(acked) == len(set(acked)) == 160
    written = [e["_id"] for e in logged(team.store)]
    assert all(written.count(i) == 1 for i in acked), "every acknowledged event present once"
    with Store.open(team.store) as store:
        walker = list(store.repo.get_walker())
        assert all(len(entry.commit.parents) <= 1 for entry in walker), "one line of history"
        made = len(walker) - commits_before
    assert 1 <= made < 160, f"{made} commits for 160 posts: concurrent posts share commits"
    assert team.head() != before
    served = team.get(f"/api/v1/workspaces/{WS}/projects/{SLUG}/context", params={"format": "plain"})
    assert served.content == team.cli("context", "--plain").encode()
    rows = team.get(f"/api/v1/workspaces/{WS}/projects/{SLUG}/state", params={"all": 1})
    assert rows.content == team.cli("state", "list", "--all", "--json").encode()


def test_kill_9_during_writes_loses_nothing_acknowledged(tmp_path: Path) -> None:
    team = make_team(tmp_path)
    acked: list[str] = []
    stop = threading.Event()

    def write(n: int) -> None:
        with team.service.client(team.writer) as client:
            for i in range(1000):
                if stop.is_set():
                    return
                try:
                    answer = client.post(EVENTS, json={"events": [note(f"w{n} e{i}")]})
                except httpx.HTTPError:
                    return
                if answer.status_code == 201:
                    acked.extend(answer.json()["ids"])

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    while len(acked) < 40 and time.monotonic() < deadline:
        time.sleep(0.01)
    team.service.proc.send_signal(signal.SIGKILL)
    stop.set()
    for t in threads:
        t.join(30)
    team.service.stop()
    assert len(acked) >= 40, "writes were acknowledged before the kill"
    again = Service(team.data, tmp_path / "again.log")
    try:
        again.wait("/readyz")
        with again.client(team.reader) as client:
            path = f"/api/v1/workspaces/{WS}/projects/{SLUG}/events"
            held = {e["id"] for e in client.get(path, params={"limit": 10_000}).json()["events"]}
        assert set(acked) <= held, "every acknowledged event survives kill -9"
        with again.client(team.writer) as client:
            answer = client.post(EVENTS, json={"events": [note("after the restart")]})
            assert answer.status_code == 201, answer.text
        assert team.cli("state", "list", "--json")
    finally:
        assert again.stop() == 0


def test_a_stop_with_streams_open_exits_0_at_once(tmp_path: Path) -> None:
    team = make_team(tmp_path)
    listeners = [Listener(team.service, team.reader) for _ in range(3)]
    started = time.monotonic()
    code = team.service.stop(signal.SIGTERM)
    assert code == 0 and time.monotonic() - started < 10
    for listener in listeners:
        listener.close()


def test_posted_events_keep_the_evidence_gate(team: Team) -> None:
    unit = team.post([note("ship the page") | {"payload": {"text": "ship the page", "labels": ["work"]}}])
    unit_id = unit.json()["ids"][0]
    before = team.head()
    done = {"type": "entity.done", "project": SLUG, "payload": {"entity": unit_id}}
    refused = team.post([done])
    assert refused.status_code == 409 and refused.json()["code"] == "evidence-required", refused.text
    assert refused.json()["field"] == "events[0].payload.report" and team.head() == before
    forged = team.post([done | {"refs": {"imported": "superself"}}])
    assert forged.status_code == 403 and forged.json()["field"] == "events[0].refs.imported"
    report = {
        "type": "report.added",
        "project": SLUG,
        "payload": {"text": "shipped", "work": unit_id, "commit": "a" * 40},
    }
    assert team.post([report, done]).status_code == 201
    shown = json.loads(team.cli("state", "show", unit_id, "--json"))
    assert shown["execution"] == "done", shown


def test_a_revoke_stops_a_token_the_service_has_just_admitted_many_times(team: Team) -> None:
    secret = token(team.data, "ann", WS, "reader")
    path = f"/api/v1/workspaces/{WS}/projects/{SLUG}/context"
    with team.service.client(secret) as client:
        assert all(client.get(path).status_code == 200 for _ in range(20))
        rows = json.loads(admin(team.data, "token", "list", "--json"))
        admin(team.data, "token", "revoke", next(r["id"] for r in rows if secret.startswith(r["prefix"])))
        assert client.get(path).status_code == 401, "the very next request after the revoke"


def test_index_lag_counts_events_committed_until_a_search_brings_the_index_up(team: Team) -> None:
    import re

    def lag() -> float:
        text = httpx.get(team.service.url + "/metrics").text
        return float(re.search(r"^selfhub_index_lag_events ([\d.e+]+)$", text, re.M).group(1))  # type: ignore[union-attr]

    team.get("/api/v1/search", params={"q": "anything"})
    assert lag() == 0
    team.post([note("lagging one"), note("lagging two")])
    assert lag() == 2
    found = team.get("/api/v1/search", params={"q": "lagging"}).json()
    assert found["matched"] == 2 and lag() == 0


def test_a_cli_that_syncs_with_the_hosted_store_and_the_service_see_each_other(
    team: Team, tmp_path: Path
) -> None:
    """A push into DATA/workspaces/WS moves its main, not its files: the service makes the
    files the pushed commit's before it folds, so neither side's events are lost."""
    ben = tmp_path / "ben"
    env = base_env() | {"SELF_WORKSPACE": str(ben), "SELF_PROJECT": SLUG}
    for args in (("clone", str(team.store), str(ben)), ("goal", "bens goal from a clone"), ("sync",)):
        proc = run_self(args, env if args[0] != "clone" else base_env())
        assert proc.returncode == 0, describe(proc)
    rows = team.get(f"/api/v1/workspaces/{WS}/projects/{SLUG}/state").json()
    assert "bens goal from a clone" in {r["text"] for r in rows}, "the pushed commit is folded"
    ids = team.post([note("posted after bens push")]).json()["ids"]
    proc = run_self(("sync",), env)
    assert proc.returncode == 0, describe(proc)
    mine = {r["text"] for r in json.loads(run_self(("state", "list", "--json"), env).stdout)}
    assert {"bens goal from a clone", "posted after bens push"} <= mine
    hosted = {r["text"] for r in json.loads(team.cli("state", "list", "--json"))}
    assert {"bens goal from a clone", "posted after bens push"} <= hosted
    assert ids[0] in {e["_id"] for e in logged(team.store)}


def test_a_retry_after_a_restart_is_found_in_the_log_and_written_once(tmp_path: Path) -> None:
    """A restarted service keeps no recent events in memory: the retried id is looked up in
    the log's segments."""
    team = make_team(tmp_path)
    later = team.post([note("before the restart")]).json()["ids"][0]
    mine = ids.next_id(later, 0, 5)
    assert team.post([note("with my id", id=mine)]).status_code == 201
    assert team.service.stop() == 0
    again = Service(team.data, tmp_path / "again.log")
    try:
        again.wait("/readyz")
        with again.client(team.writer) as client:
            retried = client.post(EVENTS, json={"events": [note("with my id", id=mine)]})
            other = client.post(EVENTS, json={"events": [note("other content", id=mine)]})
        assert retried.status_code == 200 and retried.json()["replayed"] is True, retried.text
        assert other.status_code == 409 and other.json()["code"] == "exists", other.text
        assert sum(1 for e in logged(team.store) if e["_id"] == mine) == 1
    finally:
        assert again.stop() == 0
