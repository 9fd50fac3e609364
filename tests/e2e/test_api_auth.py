"""The authorization matrix of `self serve`: every route of the app × every caller.

ROUTES is the table: one row per (method, path) of the app, naming the route's action and a
request that succeeds for a caller allowed to make it. `test_every_route_has_a_row` reads the
routes of the built app, so a route added without a row fails here; a row whose route is not
in the app (yet) is skipped with that reason. The expected status follows from the action:

| caller | public | read | command | admin |
| --- | --- | --- | --- | --- |
| none, bad, revoked | ok | 401 | 401 | 401 |
| other (a token of another workspace) | ok | 403* | 403* | 403* |
| reader | ok | ok | 403 | 403 |
| writer | ok | ok | ok | 403 |
| admin | ok | ok | ok | ok |

*on a route whose path names a workspace; elsewhere a token of any workspace is a caller like
any other (it lists, searches… its own workspace).

The web view's pages (`service/server/web`, rows marked `view`) take the same token from the view's
cookie instead of the header, with the same answers as HTML pages; its sign-in form (action
`signin`) takes the token in the form: 401 for none, a bad or a revoked one, else 303.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import httpx
import pytest

from tests.support.apiteam import CALLERS, PROBLEM, REFUSED, SLUG, WS, Team, app_routes, running_team
from tests.support.serving import admin, token, token_id

Action = Literal["public", "read", "command", "admin", "signin"]
Body = Callable[[str], Any] | None


@dataclass(frozen=True)
class Row:
    action: Action
    query: str = ""
    body: Body = None  # the JSON body a caller sends (given the caller's name)
    ok: int = 200  # the status of an allowed request
    stream: bool = False  # an endless answer: read the status and headers only
    view: bool = False  # a page of the web view: the caller's token in its cookie, answers HTML
    form: Body = None  # a web form that writes: its fields (given the caller's name), sent with its token


def goal(caller: str) -> dict[str, str]:
    return {"command": "add", "preset": "goal", "text": f"a goal set by the {caller} caller"}


def note(caller: str) -> dict[str, Any]:
    text = f"a note posted by the {caller} caller"
    return {"events": [{"type": "entity.confirmed", "project": SLUG, "payload": {"text": text}}]}


def idea(caller: str) -> dict[str, str]:
    return {"kind": "idea", "text": f"an idea the {caller} caller added in the web view"}


def report(caller: str) -> dict[str, str]:
    return {"text": f"a report the {caller} caller gave in the web view"}


API = "/api/v1/workspaces/{ws:str}"
PROJECT = API + "/projects/{slug:str}"
ROUTES: dict[tuple[str, str], Row] = {
    ("GET", "/healthz"): Row("public"),
    ("GET", "/readyz"): Row("public"),
    ("GET", "/api/v1/workspaces"): Row("read"),
    ("GET", "/api/v1/whoami"): Row("read"),
    ("GET", API + "/projects"): Row("read"),
    ("GET", PROJECT + "/context"): Row("read", "format=json&budget=500"),
    ("GET", PROJECT + "/status"): Row("read"),
    ("GET", PROJECT + "/state"): Row("read", "all=1"),
    ("GET", PROJECT + "/entities/{record:str}"): Row("read"),
    ("POST", API + "/commands"): Row("command", f"project={SLUG}", goal, ok=201),
    ("POST", API + "/events"): Row("command", "", note, ok=201),
    # announced routes: each row takes effect when its route is in the app
    ("GET", PROJECT + "/events"): Row("read", "limit=5"),
    ("GET", API + "/stream"): Row("read", stream=True),
    ("GET", "/api/v1/search"): Row("read", "q=page"),
    ("GET", "/metrics"): Row("public"),
    # a git host's push delivery: no bearer token, its signature is the authentication
    # (tests/e2e/test_serve_remote.py); unsigned, it is one 401 for every caller
    ("POST", "/hooks/{ws:str}"): Row("public", ok=401),
    # litestar's OpenAPI document and its renderers
    ("GET", "/schema"): Row("public"),
    ("GET", "/schema/openapi.json"): Row("public"),
    ("GET", "/schema/openapi.yaml"): Row("public"),
    ("GET", "/schema/openapi.yml"): Row("public"),
    ("GET", "/schema/swagger"): Row("public"),
    ("GET", "/schema/elements"): Row("public"),
    ("GET", "/schema/redoc"): Row("public"),
    ("GET", "/schema/rapidoc"): Row("public"),
    ("GET", "/schema/oauth2-redirect.html"): Row("public"),
    ("GET", "/schema/{path:str}"): Row("public", ok=404),  # any other page: a 404 problem
    # the web view (tests/e2e/test_web_view.py drives it in a browser)
    ("GET", "/signin"): Row("public", view=True),
    ("POST", "/signin"): Row("signin", ok=303, view=True),
    ("POST", "/signout"): Row("public", ok=303, view=True),
    ("GET", "/static/{file_path:path}"): Row("public", view=True),
    ("GET", "/"): Row("read", view=True),
    ("GET", "/search"): Row("read", "q=page&all=1", view=True),
    ("GET", "/ws/{ws:str}"): Row("read", view=True),
    ("GET", "/ws/{ws:str}/projects/{slug:str}"): Row("read", view=True),
    ("GET", "/ws/{ws:str}/projects/{slug:str}/records"): Row("read", "label=goal&all=1", view=True),
    ("GET", "/ws/{ws:str}/projects/{slug:str}/records/{record:str}"): Row("read", view=True),
    ("GET", "/ws/{ws:str}/live"): Row("read", stream=True, view=True),
    ("POST", "/ws/{ws:str}/projects/{slug:str}/records"): Row("command", ok=303, view=True, form=idea),
    ("POST", "/ws/{ws:str}/projects/{slug:str}/records/{record:str}/{action:str}"): Row(
        "command", ok=303, view=True, form=report
    ),
}
# The git endpoint, a mount (`service/server/api/git.py`): git's smart HTTP requests, the token as
# HTTP basic auth's password. Its refusals are text for the git client to print, with
# `WWW-Authenticate: Basic` on a 401; the push row is git's probe (no commands), which moves
# nothing (test_git_endpoint.py pushes for real).
GIT = "/git/{ws:str}.git"
LS_REFS = b"0014command=ls-refs\n0001000csymrefs\n0000"


@dataclass(frozen=True)
class GitRequest:
    name: str
    method: str
    path: str
    action: Action
    query: str = ""
    body: bytes = b""
    kind: str = ""  # the request's content type

    @property
    def ok_type(self) -> str:
        service = "receive" if "receive" in self.path + self.query else "upload"
        ending = "advertisement" if self.method == "GET" else "result"
        return f"application/x-git-{service}-pack-{ending}"


MOUNTS: dict[tuple[str, str], list[GitRequest]] = {
    ("MOUNT", "/mcp"): [],  # MCP over HTTP: its role matrix is tests/e2e/test_mcp.py's
    ("MOUNT", "/git"): [
        GitRequest("fetch refs", "GET", GIT + "/info/refs", "read", "service=git-upload-pack"),
        GitRequest("push refs", "GET", GIT + "/info/refs", "command", "service=git-receive-pack"),
        GitRequest(
            "fetch",
            "POST",
            GIT + "/git-upload-pack",
            "read",
            body=LS_REFS,
            kind="application/x-git-upload-pack-request",
        ),
        GitRequest(
            "push probe",
            "POST",
            GIT + "/git-receive-pack",
            "command",
            body=b"0000",
            kind="application/x-git-receive-pack-request",
        ),
    ],
}
GIT_CASES = [request for requests in MOUNTS.values() for request in requests]
COOKIE = "selfhub_session"
HTML = "text/html; charset=utf-8"
RANK = {"reader": 1, "writer": 2, "admin": 3}
NEEDS = {"read": 1, "command": 2, "admin": 3}
PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")
FAKE = {"ws": "ghost", "slug": "ghost", "record": "zzzzzzzzzz", "path": "nothing-here"}


SERVED = app_routes()
CASES = sorted(ROUTES)


def present(key: tuple[str, str]) -> None:
    if key not in SERVED:
        pytest.skip(f"{key[0]} {key[1]} is not a route of the app on this branch yet")


def scoped(path: str) -> bool:
    return "ws" in PARAM.findall(path)


def expected(row: Row, caller: str, path: str) -> int:
    if row.action == "public":
        return row.ok
    if caller in ("none", "bad", "revoked"):
        return 401
    if row.action == "signin":
        return row.ok
    if caller == "other":
        return 403 if scoped(path) else row.ok
    return row.ok if RANK[caller] >= NEEDS[row.action] else 403


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    with running_team(tmp_path_factory.mktemp("auth")) as made:
        yield made


def url(team: Team, path: str, row: Row, fake: str | None = None) -> str:
    """`path` with its parameters filled in (`fake` one made up), and the row's query."""
    real = {"ws": WS, "slug": SLUG, "record": team.goal, "path": "openapi.txt", "file_path": "view.css"}
    real["action"] = "report"

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        return FAKE.get(name, "x") if name == fake else real.get(name, "x")

    filled = PARAM.sub(value, path)
    return f"{filled}?{row.query}" if row.query else filled


_SESSIONS: dict[tuple[str, str], str] = {}


def session(team: Team, secret: str, kept: bool = True) -> str:
    """A session the sign-in form opened with `secret` (one per token and service, unless not
    `kept`: signing out ends it); the secret itself when the form refuses it."""
    key = (team.service.url, secret)
    if kept and key in _SESSIONS:
        return _SESSIONS[key]
    with httpx.Client(base_url=team.service.url, timeout=30) as client:
        answer = client.post("/signin", data={"token": secret})
    found = str(answer.cookies.get(COOKIE, secret)) if answer.status_code == 303 else secret
    if kept:
        _SESSIONS[key] = found
    return found


def form_token(opened: str) -> str:
    """The form token of session `opened`, as its pages carry it (`web/session.py: form_token`)."""
    return hmac.new(opened.encode(), b"selfhub web form", hashlib.sha256).hexdigest()


def send(team: Team, caller: str, method: str, target: str, row: Row, **extra: Any) -> httpx.Response:
    kwargs: dict[str, Any] = {"json": row.body(caller)} if row.body is not None else {}
    secret = team.tokens[caller]
    if row.view:  # the view's session is its cookie's, or the sign-in form takes the token
        if row.action == "signin":
            kwargs["data"] = {"token": secret or ""}
        elif secret is not None:
            opened = session(team, secret, kept=target != "/signout")
            kwargs["headers"] = {"Cookie": f"{COOKIE}={opened}"}
            if row.form is not None:
                kwargs["data"] = row.form(caller) | {"form_token": form_token(opened)}
        secret = None
    for key, value in extra.items():
        kwargs[key] = kwargs.get(key, {}) | value if key == "headers" else value
    with team.service.client(secret) as client:
        if not row.stream:
            return client.request(method, target, **kwargs)
        with client.stream(method, target, **kwargs) as answer:
            if answer.status_code != 200:  # a refusal is a whole problem document
                return httpx.Response(answer.status_code, headers=answer.headers, content=answer.read())
            return httpx.Response(answer.status_code, headers=answer.headers)


def test_every_route_has_a_row() -> None:
    """A route added to the app without a row in ROUTES fails here: add one line above."""
    assert ("GET", "/api/v1/workspaces") in SERVED, "the routes are read from the built app"
    missing = sorted(SERVED - set(ROUTES) - set(MOUNTS))
    assert not missing, f"routes with no row in the authorization matrix: {missing}"
    assert ("MOUNT", "/git") in SERVED, "the mounts are read from the built app"


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("key", CASES, ids=[f"{m} {p}" for m, p in CASES])
def test_matrix(team: Team, key: tuple[str, str], caller: str) -> None:
    present(key)
    method, path = key
    row = ROUTES[key]
    before = team.snapshot()
    answer = send(team, caller, method, url(team, path, row), row)
    want = expected(row, caller, path)
    assert answer.status_code == want, f"{caller} {method} {path}: {answer.text[:300]}"
    if answer.status_code in (401, 403) and row.view:
        assert answer.headers["content-type"] == HTML
        assert ('action="/signin"' if want == 401 else 'data-code="forbidden"') in answer.text
    elif answer.status_code in (401, 403):
        assert answer.headers["content-type"] == PROBLEM
        assert answer.json()["status"] == want
        unsigned = "webhook-refused" if path.startswith("/hooks/") else "unauthenticated"
        assert answer.json()["code"] == (unsigned if want == 401 else "forbidden")
    if row.action != "command" or want >= 400:
        assert team.snapshot() == before, "nothing written"
    else:
        assert team.snapshot()[0] != before[0], "the command was written"


def git_send(team: Team, caller: str, request: GitRequest, ws: str = WS) -> httpx.Response:
    secret = team.tokens[caller]
    headers = {"Git-Protocol": "version=2"} | ({"Content-Type": request.kind} if request.kind else {})
    target = request.path.replace("{ws:str}", ws) + (f"?{request.query}" if request.query else "")
    with httpx.Client(base_url=team.service.url, timeout=30.0) as client:
        auth = ("git", secret) if secret is not None else None
        return client.request(request.method, target, content=request.body, headers=headers, auth=auth)


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("request_", GIT_CASES, ids=[r.name for r in GIT_CASES])
def test_git_matrix(team: Team, request_: GitRequest, caller: str) -> None:
    before = team.snapshot()
    answer = git_send(team, caller, request_)
    want = expected(Row(request_.action), caller, request_.path)
    assert answer.status_code == want, f"{caller} {request_.name}: {answer.text[:300]}"
    assert team.snapshot() == before, "nothing written"
    if want == 200:
        assert answer.headers["content-type"] == request_.ok_type
        return
    assert answer.headers["content-type"].startswith("text/plain")
    assert ("www-authenticate" in answer.headers) == (want == 401)
    if caller in REFUSED:  # the same refusal, byte for byte, for a workspace that does not exist
        made_up = git_send(team, caller, request_, ws="ghost")
        assert (made_up.status_code, made_up.content) == (answer.status_code, answer.content)
        assert WS not in answer.text and "ghost" not in made_up.text


REFUSABLE = [k for k in CASES if ROUTES[k].action != "public" and PARAM.findall(k[1])]


@pytest.mark.parametrize("caller", REFUSED)
@pytest.mark.parametrize("key", REFUSABLE, ids=[f"{m} {p}" for m, p in REFUSABLE])
def test_a_refusal_tells_nothing_about_what_exists(team: Team, key: tuple[str, str], caller: str) -> None:
    """The refusal of a caller that may not look is the same, byte for byte, whether the
    workspace, project or record named exists or not."""
    present(key)
    method, path = key
    row = ROUTES[key]
    real = send(team, caller, method, url(team, path, row), row)
    assert real.status_code in (401, 403), real.text
    for name in PARAM.findall(path):
        made_up = send(team, caller, method, url(team, path, row, fake=name), row)
        assert (made_up.status_code, made_up.content) == (real.status_code, real.content), name
        assert made_up.headers.get("www-authenticate") == real.headers.get("www-authenticate")
    for word in (WS, SLUG, team.goal, "ghost"):
        assert word not in real.text, f"a refusal names {word!r}"


@pytest.mark.parametrize("caller", REFUSED)
@pytest.mark.parametrize("key", REFUSABLE, ids=[f"{m} {p}" for m, p in REFUSABLE])
def test_a_refusal_comes_before_the_input_is_read(team: Team, key: tuple[str, str], caller: str) -> None:
    """A caller that may not call gets its 401/403 whatever the query or body: the input is
    not parsed (so not judged) for it."""
    present(key)
    method, path = key
    row = ROUTES[key]
    garbage = "budget=abc&format=xml&all=maybe&history=maybe&limit=-1&after=%00&at=!"
    target = url(team, path, Row(row.action, garbage, stream=row.stream, view=row.view))
    answer = send(team, caller, method, target, row, content=b"{not json", headers={"content-type": "x/y"})
    assert answer.status_code == expected(row, caller, path), answer.text
    assert answer.headers["content-type"] == (HTML if row.view else PROBLEM)


def test_options_tell_nothing_about_what_exists(team: Team) -> None:
    answers = [
        team.call("none", "OPTIONS", f"/api/v1/workspaces/{name}/projects/{slug}/status")
        for name, slug in ((WS, SLUG), ("ghost", SLUG), (WS, "ghost"))
    ]
    assert len({(a.status_code, a.content, a.headers.get("allow")) for a in answers}) == 1


def test_a_token_revoked_while_the_service_runs_fails_at_once(team: Team) -> None:
    secret = token(team.data, "ann", WS, "writer")
    path = f"/api/v1/workspaces/{WS}/projects/{SLUG}/status"
    with team.service.client(secret) as client:
        assert client.get(path).status_code == 200
        admin(team.data, "token", "revoke", token_id(team.data, secret))
        refused = client.get(path)  # no wait: every request reads the token's row
    assert refused.status_code == 401
    assert refused.content == team.call("bad", "GET", path).content, "revoked and unknown look alike"


def test_the_revoked_caller_was_valid_before_its_revoke(team: Team) -> None:
    """The matrix's `revoked` token is refused because of the revoke, not from the start
    (the fixture used it once while the service ran, then revoked it)."""
    rows = __import__("json").loads(admin(team.data, "token", "list", "--json"))
    (row,) = [r for r in rows if str(team.tokens["revoked"]).startswith(r["prefix"])]
    assert row["revoked"], row
    assert row["last_used"], "used before the revoke"
