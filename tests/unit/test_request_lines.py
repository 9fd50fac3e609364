"""A request line's level and route: the probes' answers at debug (a 503 from /readyz while the
workspaces load is no error), a failure at error, the rest at info; a git endpoint path named
by its template and workspace."""

from __future__ import annotations

import pytest

from service.server.api.git import route_of
from service.server.api.observe import _level


@pytest.mark.parametrize(
    ("route", "status", "level"),
    [
        ("/healthz", 200, "debug"),
        ("/readyz", 200, "debug"),
        ("/readyz", 503, "debug"),
        ("/metrics", 200, "debug"),
        ("/metrics", 401, "info"),  # a refused scrape is worth a line
        ("/healthz", 500, "error"),
        ("/api/v1/workspaces", 200, "info"),
        ("/api/v1/workspaces", 503, "error"),
        (None, 404, "info"),
    ],
)
def test_the_level_of_a_request_line(route: str | None, status: int, level: str) -> None:
    assert _level(route, status) == level


def test_a_git_endpoint_path_is_named_by_its_template_and_workspace() -> None:
    assert route_of("/git/acme.git/info/refs") == ("/git/{ws}.git/info/refs", "acme")
    assert route_of("/git/acme/git-upload-pack") == ("/git/{ws}.git/git-upload-pack", "acme")
    assert route_of("/git/team-2.git/git-receive-pack/") == ("/git/{ws}.git/git-receive-pack", "team-2")
    assert route_of("/git/acme.git/objects/info/packs") is None, "only the smart protocol's paths"
