"""The OpenAPI document a real `self serve` serves at `/schema`: every route in it, every body
a documented struct that the real answers decode into (unknown keys forbidden), the command
body as the tagged union the route decodes, and schemathesis driving every operation of it
with a writer's token: no 5xx, every answer of a documented status, media type and schema."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import Any, get_args

import msgspec
import pytest

from tests.support.apiteam import PROBLEM, SLUG, WS, Team, app_routes, running_team

API = f"/api/v1/workspaces/{WS}"
JSON_MEDIA = "application/json"


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    with running_team(tmp_path_factory.mktemp("schema")) as made:

        def made_id(*args: str) -> str:
            return str(json.loads(made.cli(*args, "--json"))["events"][0]["payload"]["entity"])

        api = made_id("claim", "the billing API returns JSON", "--state", "accepted", "--evidence", "d.md")
        parse = made_id("claim", "clients parse every answer", "--state", "accepted", "--supports", api)
        question = made_id("question", "which wire format do clients get?")
        made.cli(
            "decide", "parse answers with the json module", "--choice", "stdlib", "--alternative",
            "orjson", "--depends-on", parse, "--answers", question, "--rationale", "no new dependency",
        )  # fmt: skip
        made.cli(
            "claim", "the billing API returns JSON with a schema", "--state", "accepted",
            "--supersedes", api, "--supersede-reason", "revise",
        )  # fmt: skip
        made.cli("work", "add", "write the docs", "--criterion", "a page per route")
        yield made


@pytest.fixture(scope="module")
def document(team: Team) -> dict[str, Any]:
    answer = team.call("none", "GET", "/schema/openapi.json")
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def served_paths() -> set[tuple[str, str]]:
    """The app's (method, OpenAPI path) pairs, but litestar's own /schema pages, the web
    view's (HTML pages for a browser, not operations of the API) and the mounts (the git
    endpoint speaks git's protocol)."""
    import re

    from service.server.web.routes import PATHS

    return {
        (m.lower(), re.sub(r"\{(\w+):\w+\}", r"{\1}", p))
        for m, p in app_routes()
        if not p.startswith("/schema") and p not in PATHS and m != "MOUNT"
    }


def test_every_route_is_in_the_document(document: dict[str, Any]) -> None:
    documented = {(m, p) for p, ops in document["paths"].items() for m in ops}
    assert served_paths() - {("get", "/metrics")} == documented  # Prometheus text, not the API
    assert document["info"]["title"] == "selfhub"
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, ops in document["paths"].items():
        for method, op in ops.items():
            yield method, path, op


def test_every_body_is_a_documented_struct(document: dict[str, Any]) -> None:
    """Each success body names a component (or a list of them), never litestar's `string` of a
    `Response[bytes]`; each error is our problem document; only the workspace list is a list
    of names and only context's text a string."""
    components = document["components"]["schemas"]
    for method, path, op in operations(document):
        for status, answer in op["responses"].items():
            for media, content in answer["content"].items():
                schema = content["schema"]
                where = f"{method} {path} {status} {media}"
                if int(status) >= 400:
                    assert (media, schema) == (PROBLEM, {"$ref": "#/components/schemas/Problem"}), where
                elif media.startswith("text/plain"):
                    assert path.endswith("/context") and schema == {"type": "string"}, where
                elif media == "text/event-stream":
                    assert path.endswith("/stream") and schema == {"type": "string"}, where
                elif path == "/api/v1/workspaces":
                    assert schema == {"type": "array", "items": {"type": "string"}}, where
                else:
                    ref = schema.get("$ref") or schema.get("items", {}).get("$ref")
                    assert ref and ref.split("/")[-1] in components, where
        if path.startswith("/api/"):
            assert op["security"] == [{"bearer": []}], f"{method} {path}"
            assert {"401"} <= set(op["responses"]), f"{method} {path}"


def test_the_command_body_is_the_tagged_union_the_route_decodes(document: dict[str, Any]) -> None:
    from service.core.commands.requests import AnyCommand

    body = document["paths"]["/api/v1/workspaces/{ws}/commands"]["post"]["requestBody"]
    assert body["required"] is True
    variants = body["content"][JSON_MEDIA]["schema"]["anyOf"]
    tags = [v["properties"]["command"]["enum"] for v in variants]
    assert tags == [[t.__struct_config__.tag] for t in get_args(AnyCommand)]
    assert all(v["additionalProperties"] is False and "command" in v["required"] for v in variants)


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [(b"{bad", 400, "malformed"), (b'{"command": "explode"}', 422, "invalid-value"), (b"[]", 422, None)],
)
def test_a_bad_command_body_is_still_our_problem_document(
    team: Team, body: bytes, status: int, code: str | None
) -> None:
    """Documenting the body did not hand its decoding to litestar: no `status_code`/`extra`."""
    from service.server.api.bodies import Problem

    answer = team.call("writer", "POST", f"{API}/commands?project={SLUG}", content=body)
    assert answer.status_code == status and answer.headers["content-type"] == PROBLEM, answer.text
    problem = msgspec.json.decode(answer.content, type=Problem)
    assert problem.code == (code or "invalid-value") and problem.status == status
    assert problem.type == f"urn:selfhub:problem:{problem.code}"


def test_the_answers_decode_into_their_documented_structs(team: Team) -> None:
    from service.core.projections.context import ContextDoc
    from service.core.projections.status import StatusDoc
    from service.server.api import bodies

    def get(path: str, kind: Any, caller: str = "reader") -> Any:
        answer = team.call(caller, "GET", path)
        assert answer.status_code == 200, answer.text
        return msgspec.json.decode(answer.content, type=kind)

    project = f"{API}/projects/{SLUG}"
    assert get("/api/v1/workspaces", list[str]) == [WS]
    assert [p.slug for p in get(f"{API}/projects", list[bodies.ProjectRow])] == [SLUG]
    assert get(f"{project}/context?format=json", ContextDoc).project == SLUG
    assert get(f"{project}/status", StatusDoc).project == SLUG
    rows = get(f"{project}/state?all=1", list[bodies.EntityRow])
    assert {r.kind for r in rows} >= {None, "claim", "decision", "question"}, "ledger keys decoded too"
    for row in rows:
        shown = get(f"{project}/entities/{row.id}", bodies.Shown)
        assert shown.id == row.id and shown.history, row.id
    written = team.call(
        "writer", "POST", f"{API}/commands?project={SLUG}", json={"command": "add", "text": "x y"}
    )
    assert written.status_code == 201, written.text
    assert msgspec.json.decode(written.content, type=bodies.Written).events[0].origin.by == "ann"
    assert get("/healthz", bodies.Health, "none").status == "ok"
    assert get("/readyz", bodies.Health, "none").status == "ready"
    refused = team.call("none", "GET", f"{API}/projects")
    assert msgspec.json.decode(refused.content, type=bodies.Problem).code == "unauthenticated"


@pytest.mark.parametrize(
    ("query", "media"), [("format=plain", "text/plain; charset=utf-8"), ("format=json", JSON_MEDIA)]
)
def test_context_answers_one_media_type_with_one_charset(team: Team, query: str, media: str) -> None:
    answer = team.call("reader", "GET", f"{API}/projects/{SLUG}/context?{query}")
    assert answer.status_code == 200 and answer.headers["content-type"] == media, answer.headers


EXAMPLES = 20  # per operation, mode and path: about 600 requests in all
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
)


def schemathesis_checks() -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import schemathesis
        from schemathesis.specs.openapi import checks

    return [getattr(checks, name, None) or getattr(schemathesis.checks, name) for name in CHECKS]


@pytest.mark.slow
def test_schemathesis_finds_no_server_error_and_every_answer_as_documented(team: Team) -> None:
    """Every operation of /schema, with examples that fit it and examples that do not, as a
    writer of WS: on path values schemathesis makes up, and on WS and its project."""
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode

    selected = schemathesis_checks()
    schema = schemathesis.openapi.from_url(team.service.url + "/schema/openapi.json")
    auth = {"Authorization": f"Bearer {team.tokens['writer']}"}
    failures: list[str] = []
    statuses: dict[int, int] = {}

    def drive(operation: Any, mode: Any, path: dict[str, str], query: dict[str, str]) -> None:
        strategy = operation.as_strategy(generation_mode=mode, path_parameters=path, query=query)

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=strategy)
        def run(case: Any) -> None:
            answer = case.call(base_url=team.service.url, headers=auth, timeout=30)
            statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
            try:
                case.validate_response(answer, checks=selected)
            except AssertionError as exc:  # schemathesis's failures; kept, so no shrinking
                failures.append(f"{operation.label} {mode.value} {path}: {str(exc)[:800]}")

        try:
            run()
        except Unsatisfiable:  # an operation with no input has no example that does not fit it
            assert mode == GenerationMode.NEGATIVE and not operation.query and not operation.body

    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path.endswith("/stream"):  # an endless answer: test_serve_writes reads it
            continue
        ours = {k: v for k, v in (("ws", WS), ("slug", SLUG)) if f"{{{k}}}" in operation.path}
        query = {"project": SLUG} if operation.path.endswith("/commands") else {}
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            drive(operation, mode, {}, {})
            if ours:
                drive(operation, mode, ours, query)
    assert not failures, "\n\n".join(failures[:5])
    assert not [s for s in statuses if s >= 500], statuses
    assert sum(statuses.values()) > 300 and statuses.get(200, 0) > 50, statuses
