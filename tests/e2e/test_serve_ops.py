"""`self serve`'s operations, on a real process: /metrics, the JSON log line of each request
(and no secret in any line), the per-token rate limit, the time limit of an answer, and the
`--config` file (its workspaces made at start; a bad one refused before anything binds)."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.selfrun import SELF, base_env, describe, run_self
from tests.support.servers import free_port
from tests.support.serving import Service, admin, token

WS, SLUG = "acme", "web"
PROBLEM = "application/problem+json"
PROJECTS = "/api/v1/workspaces/{ws}/projects"
STATUS = "/api/v1/workspaces/{ws}/projects/{slug}/status"
FIELDS = {"request_id", "workspace", "user", "route", "method", "status", "duration_ms"}


class Running:
    def __init__(self, service: Service, log: Path, tokens: dict[str, str]) -> None:
        self.service, self.log, self.tokens = service, log, tokens

    def get(self, path: str, who: str | None = None, **kwargs: Any) -> httpx.Response:
        with self.service.client(self.tokens[who] if who else None) as client:
            return client.get(path, **kwargs)

    def samples(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        answer = self.get("/metrics")
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
        return {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(answer.text)
            for s in family.samples
        }

    def lines(self, wanted: set[str]) -> dict[str, dict[str, Any]]:
        """The log's request lines by request id, once every id in `wanted` has one (a line
        is written just after its answer)."""
        deadline = time.monotonic() + 10
        while True:
            found = {}
            for line in self.log.read_text().splitlines():
                doc = json.loads(line)  # every line the service writes is JSON
                if doc.get("event") == "request":
                    found[doc["request_id"]] = doc
            if wanted <= set(found) or time.monotonic() > deadline:
                return found
            time.sleep(0.05)


def start(data: Path, config: str | None = None) -> Running:
    admin(data, "workspace", "add", WS)
    admin(data, "user", "add", "ann")
    tokens = {role: token(data, "ann", WS, role) for role in ("reader", "writer", "admin")}
    tokens["spare"] = token(data, "ann", WS, "reader")  # never sent as a token: as a string only
    admin(data, "user", "add", "bob")
    env = base_env() | {"SELF_WORKSPACE": str(data / "workspaces" / WS)}
    made = run_self(("project", "add", SLUG), env)
    assert made.returncode == 0, describe(made)
    path = None
    if config is not None:
        path = data.parent / "serve.toml"
        path.write_text(config)
    log = data.parent / "serve.log"
    service = Service(data, log, path)
    service.wait("/readyz")
    return Running(service, log, tokens)


@pytest.fixture(scope="module")
def ops(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    running = start(tmp_path_factory.mktemp("ops") / "data")
    yield running
    running.service.stop()


def counted(samples: dict[Any, float], route: str, status: str) -> float:
    return samples.get(
        ("selfhub_requests_total", (("method", "GET"), ("route", route), ("status", status))), 0
    )


def test_metrics_count_a_request_by_route_method_and_status(ops: Running) -> None:
    before = ops.samples()
    assert ops.get(f"/api/v1/workspaces/{WS}/projects", "reader").status_code == 200
    assert ops.get(f"/api/v1/workspaces/{WS}/projects", "reader").status_code == 200
    assert ops.get(f"/api/v1/workspaces/elsewhere/projects/{SLUG}/status", "reader").status_code == 403
    assert ops.get(f"/no/such/path/{ops.tokens['spare']}").status_code == 404
    samples = ops.samples()
    for route, status, more in [(PROJECTS, "200", 2), (STATUS, "403", 1), ("(unmatched)", "404", 1)]:
        assert counted(samples, route, status) - counted(before, route, status) == more, (route, status)
    assert samples[("selfhub_request_seconds_count", (("route", PROJECTS),))] >= 2
    for name in ("selfhub_stream_clients", "selfhub_index_lag_events"):
        assert samples[(name, ())] == 0.0
    exposition = ops.get("/metrics").text
    assert "# TYPE selfhub_commit_batch_events histogram" in exposition
    assert "# TYPE selfhub_fold_lag_events gauge" in exposition
    assert ops.tokens["spare"] not in exposition and "/no/such/path" not in exposition, "labels are templates"


def test_metrics_count_commits_and_open_streams(ops: Running) -> None:
    batches = ("selfhub_commit_batch_events_count", (("workspace", WS),))
    events = ("selfhub_commit_batch_events_sum", (("workspace", WS),))
    streams = ("selfhub_stream_clients", ())
    before = ops.samples()
    note = {"type": "entity.confirmed", "project": SLUG, "payload": {"text": "counted", "labels": ["idea"]}}
    with ops.service.client(ops.tokens["writer"]) as client:
        posted = client.post(f"/api/v1/workspaces/{WS}/events", json={"events": [note, note]})
        assert posted.status_code == 201, posted.text
        with client.stream("GET", f"/api/v1/workspaces/{WS}/stream") as stream:
            assert stream.status_code == 200
            settles(ops, streams, 1)
    after = ops.samples()
    assert after[batches] - before.get(batches, 0) == 1 and after[events] - before.get(events, 0) == 2
    assert before[streams] == 0
    settles(ops, streams, 0)  # once the service notices the client left


def settles(ops: Running, sample: tuple[str, tuple[tuple[str, str], ...]], value: float) -> None:
    deadline = time.monotonic() + 10
    while ops.samples()[sample] != value:
        assert time.monotonic() < deadline, f"{sample[0]} is not {value}"
        time.sleep(0.05)


def test_every_route_that_checks_a_token_documents_its_429_and_503(ops: Running) -> None:
    paths = ops.get("/schema/openapi.json").json()["paths"]
    checked = [(m, p, op) for p, ops_ in paths.items() for m, op in ops_.items() if "401" in op["responses"]]
    assert len(checked) >= 8, "every /api/v1 route checks a token"
    for method, path, op in checked:
        assert {"429", "503"} <= set(op["responses"]), f"{method} {path}"
    assert "429" not in paths["/healthz"]["get"]["responses"], "/healthz is never limited"


def test_each_request_has_one_json_line_and_no_line_holds_a_secret(ops: Running) -> None:
    spare, writer = ops.tokens["spare"], ops.tokens["writer"]
    basic = base64.b64encode(f"ann:{spare}".encode()).decode()
    bad = "shb_" + "Q" * 43
    with ops.service.client(ops.tokens["reader"]) as client:
        plain = client.get(f"/api/v1/workspaces/{WS}/projects", headers={"X-Request-Id": "trace-ok"})
        chosen = client.get(f"/api/v1/workspaces/{WS}/projects", headers={"X-Request-Id": spare})
        query = client.get(
            f"/api/v1/workspaces/{WS}/projects/{SLUG}/context",
            params={"format": "json", "budget": spare, "note": f"Bearer {spare}"},
            headers={"X-Request-Id": "trace-query"},
        )
        path = client.get(f"/api/v1/workspaces/{spare}/projects", headers={"X-Request-Id": "trace-path"})
    body = {"command": "add", "preset": "goal", "text": f"remember {spare} for later"}
    with ops.service.client(writer) as client:
        refused = client.post(
            f"/api/v1/workspaces/{WS}/commands?project={SLUG}",
            json=body,
            headers={"X-Request-Id": "trace-body"},
        )
    with ops.service.client(bad) as client:
        unknown = client.get(f"/api/v1/workspaces/{WS}/projects", headers={"X-Request-Id": "trace-bad"})
    with httpx.Client(base_url=ops.service.url) as client:
        userinfo = client.get(
            f"/api/v1/workspaces/{WS}/projects",
            headers={"Authorization": f"Basic {basic}", "X-Request-Id": "trace-basic"},
        )
    assert [plain.status_code, chosen.status_code] == [200, 200]
    assert [query.status_code, path.status_code, refused.status_code] == [400, 403, 422]
    assert [unknown.status_code, userinfo.status_code] == [401, 200]  # basic: the token as password
    assert plain.headers["x-request-id"] == "trace-ok"
    generated = chosen.headers["x-request-id"]
    assert generated != spare and re.fullmatch(r"[0-9a-f]{32}", generated), "a token is no request id"

    ids = {"trace-ok", generated, "trace-query", "trace-path", "trace-body", "trace-bad", "trace-basic"}
    lines = ops.lines(ids)
    assert ids <= set(lines)
    for line in lines.values():
        assert set(line) >= FIELDS, line
    assert {k: lines["trace-ok"][k] for k in FIELDS - {"duration_ms"}} == {
        "request_id": "trace-ok",
        "workspace": WS,
        "user": "ann",
        "route": PROJECTS,
        "method": "GET",
        "status": 200,
    }
    assert isinstance(lines["trace-ok"]["duration_ms"], float) and lines["trace-ok"]["duration_ms"] >= 0
    assert lines["trace-body"]["method"] == "POST" and lines["trace-body"]["status"] == 422
    assert lines["trace-body"]["route"] == "/api/v1/workspaces/{ws}/commands"
    assert lines["trace-path"]["workspace"] is None and lines["trace-path"]["user"] == "ann"
    assert lines["trace-bad"]["user"] is None and lines["trace-bad"]["status"] == 401
    assert lines["trace-query"]["route"] == "/api/v1/workspaces/{ws}/projects/{slug}/context"

    logged = ops.log.read_text()
    for secret in (*ops.tokens.values(), bad, basic, spare[4:]):
        assert secret not in logged, "a secret reached the log"
    assert "remember" not in logged and "budget" not in logged, "no body, no query"


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    config = """
workspaces = ["fresh", "acme"]

[limits]
rate = 0.001      # one request back every 1000 s: nothing refills during the test
burst = 3
request_s = 0.5
"""
    running = start(tmp_path_factory.mktemp("tight") / "data", config)
    yield running
    running.service.stop()


def test_a_token_is_refused_429_after_its_burst(tight: Running) -> None:
    path = f"/api/v1/workspaces/{WS}/projects"
    answers = [tight.get(path, "reader") for _ in range(5)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429, 429]
    limited = answers[3]
    assert limited.headers["content-type"] == PROBLEM
    assert limited.json()["code"] == "rate-limited" and limited.json()["status"] == 429
    assert 990 <= int(limited.headers["retry-after"]) <= 1000
    assert tight.get(path, "admin").status_code == 200, "another token has its own bucket"
    for exempt in ("/healthz", "/readyz", "/metrics"):
        assert {tight.get(exempt).status_code for _ in range(5)} == {200}, exempt


def test_requests_without_a_valid_token_share_their_addresss_bucket(tight: Running) -> None:
    path = f"/api/v1/workspaces/{WS}/projects"
    statuses = [tight.get(path).status_code for _ in range(2)]
    with httpx.Client(base_url=tight.service.url, headers={"Authorization": "Bearer shb_" + "z" * 43}) as c:
        statuses += [c.get(path).status_code for _ in range(3)]
    assert statuses == [401, 401, 401, 429, 429]


def test_an_answer_not_started_in_time_is_a_503_and_the_command_may_still_land(tight: Running) -> None:
    lock = tight.service.data / "workspaces" / WS / ".local" / "lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    body = {"command": "add", "preset": "goal", "text": "written after its answer"}
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a CLI write would: the service's write waits for it
        began = time.monotonic()
        with tight.service.client(tight.tokens["writer"]) as client:
            answer = client.post(
                f"/api/v1/workspaces/{WS}/commands?project={SLUG}",
                json=body,
                headers={"X-Request-Id": "trace-slow"},
            )
        took = time.monotonic() - began
        line = tight.lines({"trace-slow"})["trace-slow"]  # logged as answered, the lock still held
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    # at the limit (0.5 s), not at once and not when the lock goes: the log's clock starts a
    # few microseconds before the limit's timer does, and rounds (one run logged 499.974 ms)
    assert line["status"] == 503 and 490 <= line["duration_ms"] < 5000
    assert answer.status_code == 503 and answer.headers["content-type"] == PROBLEM, answer.text
    assert answer.json()["code"] == "timeout" and "may still have been applied" in answer.json()["detail"]
    assert answer.headers["x-request-id"] == "trace-slow"
    assert 0.5 <= took < 5.0, f"answered after {took:.2f} s, the handler was still waiting"
    env = base_env() | {"SELF_WORKSPACE": str(tight.service.data / "workspaces" / WS), "SELF_PROJECT": SLUG}
    deadline = time.monotonic() + 10
    while "written after its answer" not in run_self(("state", "list", "--json"), env).stdout:
        assert time.monotonic() < deadline, "the write the lock held back never landed"
        time.sleep(0.1)


def test_a_body_sent_too_slowly_is_a_503(tight: Running) -> None:
    head = (
        f"POST /api/v1/workspaces/{WS}/commands HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {tight.tokens['admin']}\r\nContent-Type: application/json\r\n"
        "Content-Length: 200\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", tight.service.port), timeout=10) as conn:
        conn.sendall(head.encode() + b'{"command": ')
        began = time.monotonic()
        received = b""
        while b"}" not in received.partition(b"\r\n\r\n")[2]:
            chunk = conn.recv(4096)
            if not chunk:
                break
            received += chunk
        took = time.monotonic() - began
    status_line, _, rest = received.partition(b"\r\n")
    assert status_line.startswith(b"HTTP/1.1 503"), received
    assert json.loads(rest.partition(b"\r\n\r\n")[2])["code"] == "timeout"
    assert 0.4 <= took < 5.0


def test_the_configurations_workspaces_are_made_at_start(tight: Running) -> None:
    listed = json.loads(admin(tight.service.data, "workspace", "list", "--json"))
    assert listed == ["acme", "fresh"]
    fresh = token(tight.service.data, "bob", "fresh", "reader")
    with tight.service.client(fresh) as client:
        assert client.get("/api/v1/workspaces/fresh/projects").json() == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[limits]\nburst = 3\nrte = 1.0\n", "unknown key `limits.rte`"),
        ('workspaces = ["new"]\nlogs = "json"\n', "unknown key `logs`"),
        ("[limits]\nburst = 0\n", "limits.burst: expected `int` >= 1"),
        ("[logging\nlevel = 'info'\n", "is not TOML"),
        (None, "cannot be read"),
    ],
    ids=["nested-key", "top-key", "bad-value", "not-toml", "missing"],
)
def test_a_bad_configuration_is_refused_before_anything_binds(
    tmp_path: Path, text: str | None, said: str
) -> None:
    config = tmp_path / "serve.toml"
    if text is not None:
        config.write_text(text)
    data, port = tmp_path / "data", free_port()
    data.mkdir()
    args = [SELF, "serve", "--data", str(data), "--port", str(port), "--config", str(config)]
    proc = subprocess.run(args, env=base_env(), capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"self: {config}: ") and said in proc.stderr, proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and proc.stdout == ""
    assert not (data / "workspaces").exists(), "nothing made from a refused configuration"


def test_a_workspace_that_cannot_be_opened_keeps_the_service_unready_and_its_log_says_which(
    tmp_path: Path,
) -> None:
    """A store broken on disk (main names no commit): /healthz answers, /readyz is a 503 that
    names no workspace and no path, and one JSON log line names the workspace and what to do."""
    data = tmp_path / "data"
    admin(data, "workspace", "add", "good")
    admin(data, "workspace", "add", "broken")
    (data / "workspaces" / "broken" / ".git" / "refs" / "heads" / "main").write_text("not a commit\n")
    service = Service(data, tmp_path / "serve.log")
    try:
        deadline = time.monotonic() + 30
        while (answer := httpx.get(service.url + "/readyz")).json()["code"] == "loading":
            assert time.monotonic() < deadline, "still loading"
            time.sleep(0.05)
        assert answer.status_code == 503 and answer.headers["content-type"] == PROBLEM
        assert answer.json()["code"] == "load-failed"
        assert "broken" not in answer.text and str(tmp_path) not in answer.text
        assert httpx.get(service.url + "/healthz").status_code == 200
        failed = [
            doc
            for doc in map(json.loads, (tmp_path / "serve.log").read_text().splitlines())
            if doc.get("event") == "load-failed"
        ]
        assert len(failed) == 1 and failed[0]["level"] == "error"
        assert "'broken' could not be opened" in failed[0]["error"] and "self doctor" in failed[0]["error"]
    finally:
        service.stop()
