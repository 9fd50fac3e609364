"""`self serve`: the HTTP API of a real service process, driven with httpx, against the real
`self` CLI on the same store (same bytes, same rows, same refusals)."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.selfrun import base_env, describe, run_self
from tests.support.serving import Service, admin, token, token_id

WS, OTHER, SLUG = "acme", "other", "web"
PROBLEM = "application/problem+json"
CALLERS = ("none", "bad", "revoked", "reader", "writer", "admin", "other")


class Team:
    def __init__(self, data: Path, service: Service, tokens: dict[str, str | None]) -> None:
        self.goal = ""
        self.data = data
        self.service = service
        self.tokens = tokens

    def store_env(self, workspace: str = WS) -> dict[str, str]:
        env = base_env()
        env |= {"SELF_WORKSPACE": str(self.data / "workspaces" / workspace), "SELF_PROJECT": SLUG}
        return env

    def cli(self, *args: str, workspace: str = WS) -> str:
        proc = run_self(args, self.store_env(workspace))
        assert proc.returncode == 0, describe(proc)
        return proc.stdout

    def call(self, caller: str, method: str, path: str, **kwargs: Any) -> Any:
        with self.service.client(self.tokens[caller]) as client:
            return client.request(method, path, **kwargs)


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    data = tmp_path_factory.mktemp("serve") / "data"
    admin(data, "workspace", "add", WS)
    admin(data, "workspace", "add", OTHER)
    admin(data, "user", "add", "ann")
    tokens: dict[str, str | None] = {"none": None, "bad": "shb_" + "x" * 43}
    for role in ("reader", "writer", "admin"):
        tokens[role] = token(data, "ann", WS, role)
    tokens["revoked"] = token(data, "ann", WS, "admin")
    tokens["other"] = token(data, "ann", OTHER, "admin")
    made = Team(data, Service(data, data.parent / "serve.log"), tokens)
    for workspace in (WS, OTHER):
        made.cli("project", "add", SLUG, "--desc", "the web app", workspace=workspace)
    made.goal = json.loads(made.cli("goal", "ship the first page", "--json"))["events"][0]["payload"][
        "entity"
    ]
    made.service.wait("/readyz")
    assert made.call("revoked", "GET", f"/api/v1/workspaces/{WS}/projects").status_code == 200
    admin(data, "token", "revoke", token_id(data, str(tokens["revoked"])))  # while it serves
    yield made
    made.service.stop()


BASE = f"/api/v1/workspaces/{WS}"
READS = [
    f"{BASE}/projects",
    f"{BASE}/projects/{SLUG}/context?format=plain",
    f"{BASE}/projects/{SLUG}/context?format=json&budget=500",
    f"{BASE}/projects/{SLUG}/status",
    f"{BASE}/projects/{SLUG}/state?all=1",
    f"{BASE}/projects/{SLUG}/entities/GOAL",
]
EXPECTED_READ = {"none": 401, "bad": 401, "revoked": 401, "other": 403}


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("path", READS)
def test_auth_matrix_reads(team: Team, path: str, caller: str) -> None:
    answer = team.call(caller, "GET", path.replace("GOAL", team.goal))
    assert answer.status_code == EXPECTED_READ.get(caller, 200), answer.text
    if answer.status_code != 200:
        assert answer.headers["content-type"] == PROBLEM
        assert SLUG not in answer.text and WS not in answer.text, "a refusal names nothing that exists"


@pytest.mark.parametrize("caller", CALLERS)
def test_auth_matrix_commands(team: Team, caller: str) -> None:
    body = {"command": "project-add", "slug": f"made-by-{caller}"}
    answer = team.call(caller, "POST", f"{BASE}/commands", json=body)
    expected = {"writer": 201, "admin": 201, "reader": 403}.get(caller, EXPECTED_READ.get(caller))
    assert answer.status_code == expected, answer.text
    if expected == 201:
        assert [e["type"] for e in answer.json()["events"]] == ["project.added"]
        assert answer.json()["events"][0]["origin"]["by"] == "ann"
    else:
        assert answer.headers["content-type"] == PROBLEM
    slugs = [p["slug"] for p in json.loads(team.cli("project", "list", "--json"))]
    assert (f"made-by-{caller}" in slugs) == (expected == 201)


@pytest.mark.parametrize("caller", CALLERS)
def test_auth_matrix_workspace_list(team: Team, caller: str) -> None:
    answer = team.call(caller, "GET", "/api/v1/workspaces")
    if caller in ("none", "bad", "revoked"):
        assert answer.status_code == 401 and answer.headers["content-type"] == PROBLEM
    else:
        assert answer.status_code == 200
        assert answer.json() == [OTHER if caller == "other" else WS], "only the workspace the token opens"


def test_unauthenticated_answers_are_one_answer(team: Team) -> None:
    """No token, a bad one and a revoked one cannot be told apart."""
    answers = [team.call(c, "GET", f"{BASE}/projects") for c in ("none", "bad", "revoked")]
    assert {a.status_code for a in answers} == {401}
    assert len({a.content for a in answers}) == 1
    assert answers[0].json()["code"] == "unauthenticated"


def test_another_workspace_and_a_missing_one_get_the_same_answer(team: Team) -> None:
    names = (OTHER, "ghost", "a.b", "-x")
    answers = [team.call("admin", "GET", f"/api/v1/workspaces/{w}/projects/{SLUG}/status") for w in names]
    assert [a.status_code for a in answers] == [403] * len(names), [a.text for a in answers]
    assert len({a.content for a in answers}) == 1
    for trick in ("..", "%2e%2e", "acme%2F..%2Fother"):
        answer = team.call("admin", "GET", f"/api/v1/workspaces/{trick}/projects")
        assert answer.status_code in (403, 404) and answer.headers["content-type"] == PROBLEM, trick


def test_context_is_byte_identical_to_the_cli(team: Team) -> None:
    for query, args in [
        ("format=plain", ("context", "--plain")),
        ("format=json", ("context", "--json")),
        ("format=plain&budget=300", ("context", "--plain", "--budget", "300")),
        ("format=json&budget=300", ("context", "--json", "--budget", "300")),
    ]:
        answer = team.call("reader", "GET", f"{BASE}/projects/{SLUG}/context?{query}")
        assert answer.status_code == 200, answer.text
        assert answer.content == team.cli(*args).encode(), query
    assert "ship the first page" in team.cli("context", "--plain")


def test_status_and_state_rows_are_the_clis(team: Team) -> None:
    status = team.call("reader", "GET", f"{BASE}/projects/{SLUG}/status")
    assert status.content == team.cli("status", "--json").encode()
    rows = team.call("reader", "GET", f"{BASE}/projects/{SLUG}/state?all=1")
    assert rows.content == team.cli("state", "list", "--all", "--json").encode()
    live = team.call("reader", "GET", f"{BASE}/projects/{SLUG}/state")
    assert live.content == team.cli("state", "list", "--json").encode()


def test_one_record_with_its_history_is_the_clis(team: Team) -> None:
    for query, flags in [("", ("--history",)), ("?history=0", ()), ("?history=1", ("--history",))]:
        answer = team.call("reader", "GET", f"{BASE}/projects/{SLUG}/entities/{team.goal[:10]}{query}")
        assert answer.status_code == 200, answer.text
        assert answer.content == team.cli("state", "show", team.goal[:10], *flags, "--json").encode()
    missing = team.call("reader", "GET", f"{BASE}/projects/{SLUG}/entities/zzzzzzzz")
    assert missing.status_code == 404 and missing.headers["content-type"] == PROBLEM


def test_a_writers_command_gives_the_rows_the_cli_gives(team: Team) -> None:
    body = {"command": "add", "preset": "decide", "text": "use one service", "why": "simpler"}
    answer = team.call("writer", "POST", f"{BASE}/commands?project={SLUG}", json=body)
    assert answer.status_code == 201, answer.text
    made = answer.json()["events"][0]["payload"]["entity"]
    team.cli("decide", "use one service", "--why", "simpler", workspace=OTHER)

    def row(workspace: str, text: str) -> dict[str, Any]:
        rows = json.loads(team.cli("state", "list", "--json", workspace=workspace))
        (found,) = [r for r in rows if r["text"] == text]
        return {k: v for k, v in found.items() if k not in ("id", "short", "created", "updated")}

    assert row(WS, "use one service") == row(OTHER, "use one service")
    served = team.call("reader", "GET", f"{BASE}/projects/{SLUG}/state")
    assert served.content == team.cli("state", "list", "--json").encode()
    assert made in served.text


def test_a_refused_command_is_the_clis_refusal_as_a_problem(team: Team) -> None:
    text = "read /home/ann/notes.txt first"
    before = team.cli("state", "list", "--all", "--json")
    cli = run_self(("goal", text), team.store_env(OTHER))
    assert cli.returncode == 2, describe(cli)
    answer = team.call(
        "writer", "POST", f"{BASE}/commands?project={SLUG}", json={"command": "add", "text": text}
    )
    assert answer.status_code == 422 and answer.headers["content-type"] == PROBLEM, answer.text
    doc = answer.json()
    assert (
        doc["code"] == "sanitize" and doc["status"] == 422 and doc["type"] == "urn:selfhub:problem:sanitize"
    )
    assert team.cli("state", "list", "--all", "--json") == before, "nothing written"


def test_the_writer_is_the_tokens_user_as_the_actor_the_header_names(team: Team) -> None:
    body = {"command": "add", "text": "an agent's note", "preset": "goal"}
    path = f"{BASE}/commands?project={SLUG}"
    answer = team.call("writer", "POST", path, json=body, headers={"X-Selfhub-Actor": "agent"})
    assert answer.status_code == 201, answer.text
    assert answer.json()["events"][0]["origin"] == {"actor": "agent", "by": "ann", "confirmed": True}
    robot = team.call("writer", "POST", path, json=body | {"text": "x"}, headers={"X-Selfhub-Actor": "robot"})
    assert robot.status_code == 422 and robot.json()["field"] == "actor", robot.text


def test_a_command_on_a_missing_record_is_a_404_problem(team: Team) -> None:
    answer = team.call(
        "writer", "POST", f"{BASE}/commands", json={"command": "confirm", "record": "zzzzzzzz"}
    )
    assert answer.status_code == 404 and answer.json()["code"] == "not-found", answer.text


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{bad", 400, "malformed"),
        (b"", 400, "malformed"),
        (b'{"command": "explode"}', 422, "invalid-value"),
        (b'{"command": "add", "text": "x", "extra": 1}', 422, "invalid-value"),
        (b"x" * (2 * 1024 * 1024), 413, None),
    ],
    ids=["malformed", "empty", "unknown-command", "unknown-field", "oversized"],
)
def test_bad_bodies_are_4xx_problems(team: Team, body: bytes, status: int, code: str | None) -> None:
    before = team.cli("state", "list", "--all", "--json")
    answer = team.call("writer", "POST", f"{BASE}/commands?project={SLUG}", content=body)
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == PROBLEM
    assert answer.json()["status"] == status
    if code is not None:
        assert answer.json()["code"] == code
    assert team.cli("state", "list", "--all", "--json") == before


@pytest.mark.parametrize(
    ("query", "status"),
    [("budget=5", 422), ("budget=abc", 400), ("format=xml", 400), ("budget=99999999999", 422)],
)
def test_bad_query_values_are_4xx_problems(team: Team, query: str, status: int) -> None:
    answer = team.call("reader", "GET", f"{BASE}/projects/{SLUG}/context?{query}")
    assert answer.status_code == status and answer.headers["content-type"] == PROBLEM, answer.text
    assert answer.json()["status"] == status
    assert query.split("=")[1] not in answer.json()["title"], "a title is the status's, not the input"


def test_an_unknown_project_is_a_404_problem(team: Team) -> None:
    answer = team.call("reader", "GET", f"{BASE}/projects/nope/status")
    assert answer.status_code == 404 and answer.json()["field"] == "project", answer.text


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_health_readiness_and_a_clean_stop(tmp_path: Path, sig: int) -> None:
    data = tmp_path / "data"
    admin(data, "workspace", "add", WS)
    service = Service(data, tmp_path / "serve.log")
    try:
        service.wait("/readyz")
        with service.client() as client:
            assert client.get("/healthz").json() == {"status": "ok"}
            assert client.get("/readyz").json() == {"status": "ready"}
            assert client.get("/api/v1/nothing").status_code == 404
    finally:
        code = service.stop(sig)
    assert code == 0, (tmp_path / "serve.log").read_text()


def test_a_docket_import_posted_as_a_command_gives_the_clis_records(team: Team) -> None:
    ledger = Path(__file__).resolve().parents[1] / "fixtures" / "docket" / "first.jsonl"
    numbered = enumerate(ledger.read_text("utf-8").splitlines(), 1)
    lines = [[n, json.loads(line)] for n, line in numbered if line.strip()]
    answer = team.call(
        "writer", "POST", f"{BASE}/commands?project={SLUG}", json={"command": "import-docket", "lines": lines}
    )
    assert answer.status_code == 201, answer.text
    team.cli("import", "docket", str(ledger), workspace=OTHER)

    def imported(workspace: str) -> list[str]:
        """Each imported record's row, its ids named by the Docket aliases they stand for."""
        rows = [
            r
            for r in json.loads(team.cli("state", "list", "--all", "--json", workspace=workspace))
            if r.get("alias")
        ]
        aliases = {r["id"]: r["alias"] for r in rows}
        shown = []
        for row in sorted(rows, key=lambda r: r["alias"]):
            text = json.dumps({k: v for k, v in row.items() if k not in ("short", "created", "updated")})
            for record, alias in aliases.items():
                text = text.replace(record, f"<{alias}>")
            shown.append(text)
        return shown

    assert imported(WS) and imported(WS) == imported(OTHER)
