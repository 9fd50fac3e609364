"""A team on a real `self serve` process for the API's e2e tests: a data directory made by the
`self admin` commands with two workspaces (`acme`, `other`), each with project `web`, a
user and a token of every role, one of them revoked while the service runs, and one record.

`Team.call(caller, method, path)` sends a request as one of CALLERS; `Team.snapshot()` is
what a refused request must leave as it was (the workspace's git head and its log files);
`app_routes()` lists the routes of the app as built, read in this process."""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.support.selfrun import base_env, describe, run_self
from tests.support.serving import Service, admin, token, token_id

WS, OTHER, SLUG = "acme", "other", "web"
PROBLEM = "application/problem+json"
# Who calls: no header, a well-formed unknown token, a revoked one, each role on WS, an admin of OTHER.
CALLERS = ("none", "bad", "revoked", "reader", "writer", "admin", "other")
REFUSED = ("none", "bad", "revoked", "other")  # they may learn nothing about what exists
BAD_TOKEN = "shb_" + "x" * 43


class Team:
    def __init__(self, data: Path, service: Service, tokens: dict[str, str | None]) -> None:
        self.data = data
        self.service = service
        self.tokens = tokens
        self.goal = ""

    def store(self, workspace: str = WS) -> Path:
        return self.data / "workspaces" / workspace

    def cli(self, *args: str, workspace: str = WS) -> str:
        env = base_env() | {"SELF_WORKSPACE": str(self.store(workspace)), "SELF_PROJECT": SLUG}
        proc = run_self(args, env)
        assert proc.returncode == 0, describe(proc)
        return proc.stdout

    def call(self, caller: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        with self.service.client(self.tokens[caller]) as client:
            return client.request(method, path, **kwargs)

    def snapshot(self, workspace: str = WS) -> tuple[bytes, dict[str, str]]:
        """The workspace's git head and the digest of every file outside `.git` and `.local`."""
        from dulwich.repo import Repo

        root = self.store(workspace)
        with Repo(str(root)) as repo:
            head = repo.head()
        files = {
            str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).parts[0] not in (".git", ".local")
        }
        return head, files


def make_team(data: Path) -> dict[str, str | None]:
    """Workspaces, a user and the tokens of every caller, made by `self admin`."""
    admin(data, "workspace", "add", WS)
    admin(data, "workspace", "add", OTHER)
    admin(data, "user", "add", "ann")
    tokens: dict[str, str | None] = {"none": None, "bad": BAD_TOKEN}
    for role in ("reader", "writer", "admin"):
        tokens[role] = token(data, "ann", WS, role)
    tokens["revoked"] = token(data, "ann", WS, "admin")
    tokens["other"] = token(data, "ann", OTHER, "admin")
    return tokens


@contextmanager
def running_team(folder: Path) -> Iterator[Team]:
    """A service over a new team; the `revoked` token is revoked after it has been used."""
    data = folder / "data"
    tokens = make_team(data)
    team = Team(data, Service(data, folder / "serve.log"), tokens)
    try:
        for workspace in (WS, OTHER):
            team.cli("project", "add", SLUG, "--desc", "the web app", workspace=workspace)
        written = json.loads(team.cli("goal", "ship the first page", "--json"))
        team.goal = written["events"][0]["payload"]["entity"]
        team.service.wait("/readyz")
        assert team.call("revoked", "GET", f"/api/v1/workspaces/{WS}/projects").status_code == 200
        admin(data, "token", "revoke", token_id(data, str(tokens["revoked"])))  # while it serves
        yield team
    finally:
        team.service.stop()


def app_routes() -> set[tuple[str, str]]:
    """Every (method, path) the built app serves, but the OPTIONS litestar adds to each path."""
    from service.server.bootstrap import build

    with warnings.catch_warnings():  # litestar 2.2x warns of the inferred path-parameter style
        warnings.simplefilter("ignore", DeprecationWarning)
        app = build(Path("/nonexistent/selfhub-data"))  # nothing is read until it starts
    routes = {
        (method, route.path)
        for route in app.routes
        for handler in getattr(route, "route_handlers", [])
        for method in getattr(handler, "http_methods", ())
        if method not in ("OPTIONS", "HEAD")
    }
    return routes | mounts(app)


def mounts(app: Any) -> set[tuple[str, str]]:
    """The app's mounts (an ASGI app under a path, which answers every method below it)."""
    return {
        ("MOUNT", route.path)
        for route in app.routes
        if getattr(getattr(route, "route_handler", None), "is_mount", False)
    }
