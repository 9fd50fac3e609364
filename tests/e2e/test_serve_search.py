"""`GET /api/v1/search` of a real `self serve` process, beside `self search --json` run on the
same store: records written by the CLI into DATA/workspaces/WS are found at once, ranked as
the CLI ranks them, in rows the CLI prints; another workspace's token learns nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from service.server.api.bodies import SearchAnswer
from tests.support.selfrun import base_env, describe, run_self
from tests.support.serving import Service, admin, token

WS, OTHER = "acme", "other"
PROBLEM = "application/problem+json"
SEARCH = "/api/v1/search"


class Searching:
    def __init__(self, data: Path, service: Service, tokens: dict[str, str]) -> None:
        self.data = data
        self.service = service
        self.tokens = tokens

    def cli(self, *args: str, workspace: str = WS, project: str | None = "web") -> str:
        env = base_env() | {"SELF_WORKSPACE": str(self.data / "workspaces" / workspace)}
        if project is not None:
            env["SELF_PROJECT"] = project
        proc = run_self(args, env)
        assert proc.returncode == 0, describe(proc)
        return proc.stdout

    def get(self, caller: str | None, **params: Any) -> httpx.Response:
        with self.service.client(None if caller is None else self.tokens[caller]) as client:
            return client.get(SEARCH, params=params)

    def records(self, caller: str, **params: Any) -> list[dict[str, Any]]:
        answer = self.get(caller, **params)
        assert answer.status_code == 200, answer.text
        return [hit["record"] for hit in answer.json()["hits"]]


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Searching]:
    data = tmp_path_factory.mktemp("search") / "data"
    for workspace in (WS, OTHER):
        admin(data, "workspace", "add", workspace)
    admin(data, "user", "add", "ann")
    tokens = {
        "reader": token(data, "ann", WS, "reader"),
        "writer": token(data, "ann", WS, "writer"),
        "other": token(data, "ann", OTHER, "reader"),
    }
    made = Searching(data, Service(data, data.parent / "serve.log"), tokens)
    for workspace in (WS, OTHER):
        made.cli("project", "add", "web", workspace=workspace, project=None)
    made.cli("project", "add", "api", project=None)
    made.cli("idea", "deploy the web app on a friday", "--exposure", "search")
    made.cli("idea", "deploy the api", "--exposure", "search", project="api")
    made.cli("claim", "deploys are reversible", "--state", "accepted", "--exposure", "search")
    made.cli("goal", "deploy every day")  # a goal: context shows it (exposure full)
    made.cli("idea", "deploy somewhere secret", "--exposure", "search", workspace=OTHER)
    made.service.wait("/readyz")
    yield made
    made.service.stop()


@pytest.mark.parametrize(
    ("params", "flags"),
    [
        ({"q": "deploy", "project": "web"}, ()),
        ({"q": "deploy", "project": "api"}, ()),
        ({"q": "deploy", "project": "web", "all": "1"}, ("--all",)),
        ({"q": "DEPLOY web", "project": "web", "exposure": "full"}, ("--exposure", "full")),
        ({"q": "deploy", "project": "web", "limit": "2"}, ()),
        ({"q": "nothing-like-it", "project": "web"}, ()),
    ],
)
def test_search_answers_the_rows_self_search_prints(
    team: Searching, params: dict[str, str], flags: tuple[str, ...]
) -> None:
    printed = json.loads(team.cli("search", params["q"], *flags, "--json", project=params["project"]))
    limit = int(params.get("limit", 20))
    answer = team.get("reader", **params)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/json"
    doc = answer.json()
    assert [hit["record"] for hit in doc["hits"]] == printed[:limit]
    documented = msgspec.json.decode(answer.content, type=SearchAnswer)  # no key it does not name
    assert [hit.record.id for hit in documented.hits] == [row["id"] for row in printed[:limit]]
    assert doc["matched"] == len(printed) and doc["workspaces"] == [WS]
    assert [(hit["workspace"], hit["rank"]) for hit in doc["hits"]] == [
        (WS, n) for n in range(1, len(doc["hits"]) + 1)
    ]


def test_the_named_project_comes_first(team: Searching) -> None:
    web = [r["project"] for r in team.records("reader", q="deploy", project="web")]
    api = [r["project"] for r in team.records("reader", q="deploy", project="api")]
    assert web[0] == "web" and api[0] == "api" and sorted(web) == sorted(api)


def test_a_record_the_cli_writes_into_data_is_found_at_once(team: Searching) -> None:
    assert team.records("reader", q="zeppelin") == []
    team.cli("idea", "ride the zeppelin", "--exposure", "search")
    (found,) = team.records("reader", q="zeppelin")
    assert found["text"] == "ride the zeppelin"
    assert [found] == json.loads(team.cli("search", "zeppelin", "--json"))


def test_a_record_written_through_the_service_is_found_at_once(team: Searching) -> None:
    body = {"command": "add", "preset": "idea", "text": "hovercraft", "exposure": "search"}
    with team.service.client(team.tokens["writer"]) as client:
        written = client.post("/api/v1/workspaces/acme/commands?project=web", json=body)
    assert written.status_code == 201, written.text
    assert [r["text"] for r in team.records("reader", q="hovercraft")] == ["hovercraft"]


def test_another_workspaces_token_learns_nothing(team: Searching) -> None:
    mine = team.get("other", q="deploy", all="1").json()
    assert mine["workspaces"] == [OTHER]
    assert [h["record"]["text"] for h in mine["hits"]] == ["deploy somewhere secret"]
    refused = [team.get("other", q="deploy", workspace=w) for w in (WS, "ghost")]
    assert [a.status_code for a in refused] == [403, 403]
    assert refused[0].content == refused[1].content, "an existing workspace and a missing one look alike"
    assert refused[0].headers["content-type"] == PROBLEM
    assert "deploy" not in refused[0].text and "web" not in refused[0].text
    assert team.get("reader", q="deploy", workspace=WS).status_code == 200


def test_no_token_is_a_401(team: Searching) -> None:
    answer = team.get(None, q="deploy")
    assert answer.status_code == 401 and answer.headers["content-type"] == PROBLEM


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"q": "deploy", "limit": str(10**9)}, "limit"),
        ({"q": "deploy", "limit": "0"}, "limit"),
        ({"q": "deploy", "limit": "many"}, "limit"),
        ({"q": ""}, "q"),
        ({}, "q"),
        ({"q": "x" * 1001}, "q"),
        ({"q": "deploy", "exposure": "secret"}, "exposure"),
        ({"q": "deploy", "project": "../acme"}, "project"),
    ],
)
def test_bad_parameters_are_400_problems_naming_them(
    team: Searching, params: dict[str, str], field: str
) -> None:
    answer = team.get("reader", **params)
    assert answer.status_code == 400 and answer.headers["content-type"] == PROBLEM, answer.text
    doc = answer.json()
    assert doc["status"] == 400 and doc["field"] == field, doc
    if params.get("limit") == str(10**9):
        assert "1 to 200" in doc["detail"]


def test_ready_once_every_workspace_is_indexed(tmp_path: Path) -> None:
    import sqlite3

    data = tmp_path / "data"
    for workspace in (WS, OTHER):
        admin(data, "workspace", "add", workspace)
    env = base_env() | {"SELF_WORKSPACE": str(data / "workspaces" / WS)}
    for args in (("project", "add", "web"), ("--project", "web", "idea", "written before the start")):
        assert run_self(args, env).returncode == 0
    service = Service(data, tmp_path / "serve.log")
    try:
        service.wait("/readyz")
        with sqlite3.connect(f"file:{data / 'index.sqlite'}?mode=ro", uri=True) as db:
            heads = {row[0] for row in db.execute("SELECT workspace FROM heads")}
            (n,) = db.execute("SELECT n FROM spaces WHERE workspace = ?", [WS]).fetchone()
            texts = [row[0] for row in db.execute(f"SELECT hay FROM records_{n}")]
        db.close()
        assert heads == {WS, OTHER}
        assert any("written before the start" in text for text in texts)
    finally:
        assert service.stop() == 0
