"""A problem document never echoes a secret the request put in its path: a token-looking
path segment (a workspace, project or record name) is masked as the service's logs mask it,
over real HTTP against a real `self serve`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.apiteam import BAD_TOKEN, PROBLEM, SLUG, WS, Team, running_team

GITHUB = "ghp_" + "A1b2C3d4" * 5
SELFHUB = "shb_" + "Zx9" * 14 + "Q"


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    with running_team(tmp_path_factory.mktemp("masked")) as made:
        yield made


@pytest.mark.parametrize(
    "path",
    [
        f"/api/v1/workspaces/{WS}/projects/{{secret}}/state",
        f"/api/v1/workspaces/{WS}/projects/{SLUG}/entities/{{secret}}",
        "/api/v1/workspaces/{secret}/state",
        "/{secret}",
    ],
)
@pytest.mark.parametrize("secret", [GITHUB, SELFHUB, BAD_TOKEN])
def test_a_404_masks_a_token_in_the_path(team: Team, path: str, secret: str) -> None:
    answer = team.call("admin", "GET", path.format(secret=secret))
    assert answer.status_code == 404, answer.text
    assert answer.headers["content-type"] == PROBLEM
    body = answer.text
    for shown in (secret, secret.lower(), secret[4:24], secret[4:24].lower()):
        assert shown not in body, f"the problem echoes the token: {body}"
    assert answer.json()["detail"], "the problem still says what is wrong"


def test_a_masked_404_still_names_what_is_missing(team: Team) -> None:
    answer = team.call("admin", "GET", f"/api/v1/workspaces/{WS}/projects/{GITHUB}/state")
    detail = answer.json()["detail"]
    assert "***" in detail and "no project" in detail and SLUG in detail, detail
