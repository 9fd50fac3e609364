"""Two `self serve` processes on two data directories share one identity in a real PostgreSQL
server (`--identity`, `SELF_IDENTITY`): a token made once by `self admin token create
--identity URL` opens both, a revoke there is refused by both within a second, a web session
opened on one is valid on the other, and with PostgreSQL stopped both answer 503
`identity-unavailable` (never 200) until it is back, when they answer again unrestarted."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.postgres import Postgres, postgres
from tests.support.selfrun import base_env, describe, run_self
from tests.support.serving import Service

pytestmark = pytest.mark.slow

PROTECTED = "/api/v1/workspaces/team/projects"


def _self(*args: str) -> str:
    proc = run_self(args, base_env())
    assert proc.returncode == 0, describe(proc)
    return proc.stdout


def _until(check: Callable[[], bool], seconds: float) -> float:
    """Seconds until `check` held; fails after `seconds`."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < seconds, f"not within {seconds} s"
        time.sleep(0.02)
    return time.monotonic() - start


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[Postgres, list[Service]]]:
    with postgres() as pg:
        services: list[Service] = []
        try:
            for name in ("a", "b"):
                data = tmp_path / name
                _self("admin", "workspace", "add", "team", "--data", str(data))
                services.append(Service(data, tmp_path / f"{name}.log", env={"SELF_IDENTITY": pg.url}))
            yield pg, services
        finally:
            for service in services:
                service.stop()


def _status(service: Service, token: str) -> int:
    with service.client(token) as client:
        return client.get(PROTECTED).status_code


def test_a_token_made_once_opens_both_and_a_revoke_closes_both(
    cluster: tuple[Postgres, list[Service]], tmp_path: Path
) -> None:
    pg, services = cluster
    _self("admin", "user", "add", "ann", "--identity", pg.url)
    made = run_self(
        ("admin", "token", "create", "ann", "--workspace", "team", "--role", "reader", "--identity", pg.url),
        base_env() | {"SELF_DATA": str(tmp_path / "a")},  # the workspace checked in one of them
    )
    assert made.returncode == 0, describe(made)
    token = made.stdout.strip()
    assert [_status(s, token) for s in services] == [200, 200]
    with services[0].client(token) as client:
        assert client.get("/api/v1/whoami").json()["user"] == "ann"

    signed = httpx.post(
        services[0].url + "/signin", data={"token": token, "next": "/"}, follow_redirects=False
    )
    assert signed.status_code == 303, signed.text
    cookie = signed.cookies["selfhub_session"]
    assert httpx.get(services[1].url + "/", cookies={"selfhub_session": cookie}).status_code == 200

    (row,) = json.loads(_self("admin", "token", "list", "--identity", pg.url, "--json"))
    token_id = row["id"]
    assert f"revoked {token_id}" in _self("admin", "token", "revoke", token_id, "--identity", pg.url)
    took = _until(lambda: [_status(s, token) for s in services] == [401, 401], 1.0)
    assert took < 1.0
    page = httpx.get(services[1].url + "/", cookies={"selfhub_session": cookie}, follow_redirects=False)
    assert page.status_code in (303, 401), "a revoked token's session opens nothing"


def test_postgresql_stopped_is_a_503_never_an_allow_and_its_return_is_picked_up(
    cluster: tuple[Postgres, list[Service]],
) -> None:
    pg, services = cluster
    _self("admin", "user", "add", "ann", "--identity", pg.url)
    token = _self(
        "admin", "token", "create", "ann", "--workspace", "team", "--role", "reader", "--identity", pg.url
    ).strip()
    assert [_status(s, token) for s in services] == [200, 200]

    pg.stop()
    for service in services:
        for _ in range(3):  # the dropped connection, then dials refused: each a 503
            with service.client(token) as client:
                answer = client.get(PROTECTED)
            assert answer.status_code == 503, answer.text
            problem = answer.json()
            assert problem["code"] == "identity-unavailable"
            assert "identity database cannot be reached" in problem["detail"]
            assert str(pg.port) not in answer.text, "the answer does not say where the database is"
            assert int(answer.headers["retry-after"]) >= 1
        with service.client("shb_" + "x" * 43) as client:
            assert client.get(PROTECTED).status_code == 503  # not a 401 either: nothing is known
        assert httpx.get(service.url + "/healthz").status_code == 200

    pg.start()
    _until(lambda: [_status(s, token) for s in services] == [200, 200], 10.0)
