"""Bad input to a real `self serve`: each a clear 4xx problem document that says what is wrong
(and never echoes a secret or machine-local value back), and nothing written — the
workspaces' git heads and log files, and DATA's folders, as they were.

Cases that name a route not on the app yet (appending events, search's `limit`) skip, with
the reason, until /schema lists the route; then they run as written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.apiteam import OTHER, PROBLEM, SLUG, WS, Team, running_team

API = f"/api/v1/workspaces/{WS}"
COMMANDS = f"{API}/commands?project={SLUG}"
EVENTS = "/api/v1/workspaces/{ws}/events"  # POST: append events (announced)
SEARCH = "/api/v1/search"  # GET (announced)
MiB = 1024 * 1024


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    with running_team(tmp_path_factory.mktemp("bad")) as made:
        yield made


@pytest.fixture(scope="module")
def paths(team: Team) -> dict[str, Any]:
    found: dict[str, Any] = team.call("none", "GET", "/schema/openapi.json").json()["paths"]
    return found


def route(paths: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    """The OpenAPI operation of `method path`; the test skips while the app has none."""
    operation = paths.get(path, {}).get(method.lower())
    if operation is None:
        pytest.skip(f"{method} {path} is not in /schema on this branch yet")
    found: dict[str, Any] = operation
    return found


class Unchanged:
    """What a refused request must leave as it was."""

    def __init__(self, team: Team) -> None:
        self.team = team
        self.before = self.now()

    def now(self) -> Any:
        folders = sorted(str(p.relative_to(self.team.data)) for p in self.team.data.rglob("*") if p.is_dir())
        return self.team.snapshot(WS), self.team.snapshot(OTHER), [f for f in folders if ".git" not in f]

    def check(self) -> None:
        assert self.now() == self.before, "nothing written"


def refused(answer: httpx.Response, *statuses: int) -> dict[str, Any]:
    """The problem document of a 4xx answer among `statuses` (any 4xx when none is given)."""
    assert answer.status_code in (statuses or range(400, 500)), answer.text[:500]
    assert answer.headers["content-type"] == PROBLEM, answer.headers
    doc: dict[str, Any] = answer.json()
    assert doc["status"] == answer.status_code and doc["title"], doc
    assert isinstance(doc.get("detail"), str) and len(doc["detail"]) > 8, f"a useful message: {doc}"
    return doc


def post(team: Team, path: str, body: bytes | Any, caller: str = "writer", **kwargs: Any) -> httpx.Response:
    if isinstance(body, bytes):
        return team.call(caller, "POST", path, content=body, **kwargs)
    return team.call(caller, "POST", path, json=body, **kwargs)


# --- bodies ------------------------------------------------------------------------------


def chunks(size: int) -> Iterator[bytes]:
    for _ in range(size // 65536):
        yield b"x" * 65536


@pytest.mark.parametrize("streamed", [False, True], ids=["with-length", "chunked"])
def test_an_oversized_body_is_a_413_problem(team: Team, streamed: bool) -> None:
    kept = Unchanged(team)
    body = chunks(2 * MiB) if streamed else b'{"command": "add", "text": "' + b"x" * (2 * MiB) + b'"}'
    answer = team.call("writer", "POST", COMMANDS, content=body)
    doc = refused(answer, 413)
    assert "1,048,576 bytes" in doc["detail"], f"the cap is named: {doc}"
    kept.check()


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"{bad", "JSON"),
        (b"", "JSON"),
        (b"\xff\xfe{}", "JSON"),
        (b'{"command": "add", "text": "x"} trailing', "JSON"),
    ],
    ids=["truncated", "empty", "not-utf8", "trailing"],
)
def test_a_body_that_is_not_json_is_a_400_problem(team: Team, body: bytes, words: str) -> None:
    kept = Unchanged(team)
    doc = refused(post(team, COMMANDS, body), 400)
    assert doc["code"] == "malformed" and words in doc["detail"], doc
    kept.check()


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"command": "explode"}, "$.command"),
        ({"text": "no tag"}, "command"),
        ({"command": "add"}, "text"),
        ({"command": "add", "text": "x", "priority": "high"}, "priority"),
        ({"command": "add", "text": "x", "colour": "red"}, "colour"),
        ([{"command": "add", "text": "x"}], "object"),
        (b"[" * 50_000 + b"]" * 50_000, "object"),  # nested deeper than a recursive parser goes
    ],
    ids=["unknown-command", "no-command", "missing-field", "wrong-type", "unknown-field", "a-list", "nested"],
)
def test_a_body_that_is_not_a_command_is_a_422_naming_what(team: Team, body: Any, says: str) -> None:
    kept = Unchanged(team)
    doc = refused(post(team, COMMANDS, body), 422)
    assert doc["code"] == "invalid-value" and says in doc["detail"], doc
    kept.check()


TOKEN = "shb_" + "A1b2" * 10 + "xyz"
SECRETS = [  # field, value, the part of it that must not come back
    ("text", "read /home/ann/notes.txt first", "/home/ann"),
    ("text", "cwd is /Users/ann/src/app", "/Users/ann"),
    ("why", "key AKIAIOSFODNN7EXAMPLE rotates", "AKIAIOSFODNN7EXAMPLE"),
    ("why", f"token {TOKEN}", TOKEN),
    ("text", "see C:\\Users\\ann\\notes.txt", "\\ann\\"),
    ("text", "bell \x07 rings", "\x07"),
]


@pytest.mark.parametrize(
    ("field", "value", "secret"), SECRETS, ids=[f"{f}-{i}" for i, (f, *_) in enumerate(SECRETS)]
)
def test_a_machine_local_or_secret_fact_is_refused_naming_the_field_not_the_value(
    team: Team, field: str, value: str, secret: str
) -> None:
    kept = Unchanged(team)
    body = {"command": "add", "preset": "goal", "text": "a plain goal"} | {field: value}
    answer = post(team, COMMANDS, body)
    doc = refused(answer, 422)
    assert doc["code"] == "sanitize", doc
    assert field in doc["detail"] or field in str(doc.get("field")), doc
    assert secret not in answer.text and json.dumps(secret)[1:-1] not in answer.text, (
        "the value is not echoed"
    )
    kept.check()


# --- names in the path and the query -----------------------------------------------------

TRICKS = ["..", "%2e%2e", "a%2Fb", "..%2F" + OTHER, "%00", "acme%00", "ACME", "x" * 300, "a b", "-x", "."]


@pytest.mark.parametrize("trick", TRICKS)
def test_path_tricks_in_a_workspace_name_are_refused(team: Team, trick: str) -> None:
    kept = Unchanged(team)
    for caller in ("reader", "writer", "other"):
        for method, path in [
            ("GET", f"/api/v1/workspaces/{trick}/projects"),
            ("GET", f"/api/v1/workspaces/{trick}/projects/{SLUG}/status"),
            ("POST", f"/api/v1/workspaces/{trick}/commands?project={SLUG}"),
        ]:
            body = {"command": "add", "text": "a goal"} if method == "POST" else None
            answer = team.call(caller, method, path, json=body)
            refused(answer, 403, 404)
            assert trick.lower() not in answer.text.lower() or len(trick) < 3, "the name is not echoed"
    kept.check()


@pytest.mark.parametrize("trick", [*TRICKS, "web%00", "WEB", "web%2F..%2F..%2Fother"])
def test_path_tricks_in_a_project_name_are_refused(team: Team, trick: str) -> None:
    kept = Unchanged(team)
    for tail in ("status", "context?format=json", "state", f"entities/{team.goal}"):
        refused(team.call("reader", "GET", f"{API}/projects/{trick}/{tail}"), 400, 404, 422)
    command = {"command": "add", "preset": "goal", "text": "a goal"}
    refused(post(team, f"{API}/commands?project={trick}", command), 400, 404, 422)
    kept.check()


@pytest.mark.parametrize("slug", ["../evil", "a/b", ".git", "x" * 300, "a\x00b", "", "Web", "-web"])
def test_a_project_add_with_a_path_trick_is_refused(team: Team, slug: str) -> None:
    kept = Unchanged(team)
    doc = refused(post(team, f"{API}/commands", {"command": "project-add", "slug": slug}), 422)
    assert doc["code"] == "invalid-value", doc
    kept.check()


@pytest.mark.parametrize("record", ["..", "%2e%2e", "%00", "x" * 300, "a%2Fb", "zzzz"])
def test_tricks_in_a_record_id_are_refused(team: Team, record: str) -> None:
    kept = Unchanged(team)
    refused(team.call("reader", "GET", f"{API}/projects/{SLUG}/entities/{record}"), 404, 409, 422)
    refused(post(team, COMMANDS, {"command": "confirm", "record": record.replace("%", "")}), 404, 409, 422)
    kept.check()


# --- query values --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("budget=0", 422),
        ("budget=-1", 422),
        ("budget=99", 422),
        ("budget=1000001", 422),
        ("budget=99999999999999999999999", 422),
        ("budget=abc", 400),
        ("budget=", 400),
        ("format=xml", 400),
    ],
)
def test_a_query_value_out_of_range_is_a_4xx_naming_it(team: Team, query: str, status: int) -> None:
    kept = Unchanged(team)
    answer = team.call("reader", "GET", f"{API}/projects/{SLUG}/context?{query}")
    doc = refused(answer, status)
    name = query.split("=")[0]
    assert doc.get("field") == name, f"the problem names the parameter: {doc}"
    assert name in doc["detail"], doc
    if status == 400:
        assert doc["detail"].startswith(f"query parameter `{name}`: "), doc
    kept.check()


@pytest.mark.parametrize(
    "at",
    [
        "9999-12-31",
        "0001-01-01T00:00:00%2B01:00",
        "9999-12-31T23:59:59-01:00",
        "99999-01-01",
        "2026-02-30",
        "%00",
    ],
)
def test_a_time_travel_point_out_of_the_calendar_is_a_422_naming_it(team: Team, at: str) -> None:
    """`at` is an event id or an ISO date; one that has no UTC instant is refused, not a 500."""
    for tail in ("state", f"entities/{team.goal}"):
        doc = refused(team.call("reader", "GET", f"{API}/projects/{SLUG}/{tail}?at={at}"), 422)
        assert doc.get("field") == "at", doc


@pytest.mark.parametrize("value", ["-1", "0", "100000000000000000000", "abc", "1e9"])
def test_a_huge_or_bad_search_limit_is_a_4xx(team: Team, paths: dict[str, Any], value: str) -> None:
    route(paths, SEARCH, "GET")
    answer = team.call("reader", "GET", f"{SEARCH}?q=page&workspace={WS}&limit={value}")
    doc = refused(answer, 400, 422)
    assert "limit" in doc["detail"] or doc.get("field") == "limit", doc


# --- appending events (announced route) ----------------------------------------------------


def event(kind: str = "entity.confirmed", **payload: Any) -> dict[str, Any]:
    """An event as a client appends it: the service gives its id, time and origin."""
    return {"type": kind, "project": SLUG, "payload": {"text": "a goal", "labels": ["goal"]} | payload}


def events_body(operation: dict[str, Any], events: list[dict[str, Any]]) -> Any:
    """The body the route documents: a list of events, `{"events": [...]}`, or one event."""
    schema = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    if schema.get("type") == "array":
        return events
    if "events" in json.dumps(schema):
        return {"events": events}
    return events[0]


@pytest.mark.parametrize(
    ("events", "field"),
    [
        ([event("rocket.launched")], "type"),
        ([event(text="read /home/ann/notes.txt first")], "text"),
        ([event(text="token shb_" + "A1b2" * 10 + "xyz")], "text"),
        ([event() | {"id": "zzzzzzzzzzzzzzzzzzzzzzzzzz"}], "id"),  # an id from the far future
        (
            [event() | {"origin": {"actor": "agent", "confirmed": True, "session": "pid 4242 on box"}}],
            "origin",
        ),
    ],
    ids=["unknown-type", "machine-local", "secret", "id-from-the-future", "pid-in-origin"],
)
def test_bad_events_are_refused(
    team: Team, paths: dict[str, Any], events: list[dict[str, Any]], field: str | None
) -> None:
    operation = route(paths, EVENTS, "POST")
    kept = Unchanged(team)
    doc = refused(post(team, EVENTS.format(ws=WS) + f"?project={SLUG}", events_body(operation, events)))
    if field is not None:
        assert field in doc["detail"] or field in str(doc.get("field")), doc
    assert "/home/ann" not in doc["detail"] and "shb_" not in doc["detail"], "the value is not echoed"
    kept.check()


@pytest.mark.parametrize("body", [b"{bad", b"x" * (2 * MiB)], ids=["malformed", "oversized"])
def test_a_bad_events_body_is_refused(team: Team, paths: dict[str, Any], body: bytes) -> None:
    route(paths, EVENTS, "POST")
    kept = Unchanged(team)
    refused(post(team, EVENTS.format(ws=WS), body), 413 if len(body) > MiB else 400)
    kept.check()


@pytest.mark.parametrize("after", ["zzzzzzzzzzzzzzzzzzzzzzzzzz", "not-an-id", "%00"])
def test_events_after_an_id_from_the_future_or_no_id_is_a_4xx(
    team: Team, paths: dict[str, Any], after: str
) -> None:
    route(paths, "/api/v1/workspaces/{ws}/projects/{slug}/events", "GET")
    answer = team.call("reader", "GET", f"{API}/projects/{SLUG}/events?after={after}")
    doc = refused(answer, 400, 422)
    assert "after" in doc["detail"] or doc.get("field") == "after", doc
