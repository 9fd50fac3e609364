"""The web view's cookie is a server-side session, not the API token: signing in exchanges the
token for a random session id (stored hashed in DATA/auth.sqlite, with an expiry); the id is
no bearer token; signing out, revoking the token and the session's expiry each end it. Real
HTTP against a real `self serve` process; the token revoked by the real `self admin`."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import httpx
import pytest

from tests.support.apiteam import SLUG, WS, Team, running_team
from tests.support.serving import admin, token, token_id

COOKIE = "selfhub_session"
PAGE = f"/ws/{WS}/projects/{SLUG}"
API = f"/api/v1/workspaces/{WS}/projects"


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    with running_team(tmp_path_factory.mktemp("sessions")) as made:
        yield made


def signed_in(team: Team, secret: str) -> httpx.Response:
    """The answer to the sign-in form posted with `secret`."""
    with httpx.Client(base_url=team.service.url, timeout=30) as client:
        answer = client.post("/signin", data={"token": secret, "next": PAGE})
    assert answer.status_code == 303, answer.text
    return answer


def session_of(team: Team, secret: str) -> str:
    return str(signed_in(team, secret).cookies[COOKIE])


def page(team: Team, session: str, path: str = PAGE) -> httpx.Response:
    with httpx.Client(base_url=team.service.url, timeout=30, cookies={COOKIE: session}) as client:
        return client.get(path)


def fresh_token(team: Team) -> str:
    return token(team.data, "ann", WS, "reader")


def test_the_cookie_is_a_session_not_the_token(team: Team) -> None:
    secret = fresh_token(team)
    answer = signed_in(team, secret)
    header = answer.headers["set-cookie"]
    session = answer.cookies[COOKIE]
    assert secret not in header and secret[4:20] not in header, "the cookie holds no part of the token"
    assert session != secret and not session.startswith("shb_")
    flags = header.lower()
    assert "httponly" in flags and "samesite=strict" in flags and "path=/" in flags
    assert page(team, session).status_code == 200
    assert session_of(team, secret) != session, "each sign-in is a new session"


def test_the_cookie_is_no_bearer_token(team: Team) -> None:
    session = session_of(team, fresh_token(team))
    with team.service.client(session) as client:
        assert client.get(API).status_code == 401
    with httpx.Client(base_url=team.service.url, timeout=30, auth=("git", session)) as client:
        assert client.get(API).status_code == 401, "nor a basic password"
    assert page(team, session).status_code == 200


def test_a_raw_token_in_the_cookie_is_refused(team: Team) -> None:
    secret = fresh_token(team)
    with httpx.Client(base_url=team.service.url, timeout=30, cookies={COOKIE: secret}) as client:
        assert client.get(PAGE).status_code == 401
    with httpx.Client(base_url=team.service.url, timeout=30, cookies={"selfhub_token": secret}) as client:
        assert client.get(PAGE).status_code == 401


def test_sign_out_ends_the_session(team: Team) -> None:
    secret = fresh_token(team)
    session, other = session_of(team, secret), session_of(team, secret)
    with httpx.Client(base_url=team.service.url, timeout=30, cookies={COOKIE: session}) as client:
        out = client.post("/signout")
    assert out.status_code == 303
    assert page(team, session).status_code == 401, "the old cookie opens nothing after sign-out"
    assert page(team, other).status_code == 200, "another sign-in's session goes on"
    with team.service.client(secret) as client:
        assert client.get(API).status_code == 200, "signing out revokes no token"


def test_revoking_the_token_ends_its_sessions(team: Team) -> None:
    secret, kept = fresh_token(team), fresh_token(team)
    session, untouched = session_of(team, secret), session_of(team, kept)
    assert page(team, session).status_code == 200
    admin(team.data, "token", "revoke", token_id(team.data, secret))
    assert page(team, session).status_code == 401
    assert page(team, f"/ws/{WS}/live").status_code == 401, "the live stream too"
    assert page(team, untouched).status_code == 200
    with sqlite3.connect(team.data / "auth.sqlite") as db:
        rows = db.execute("SELECT count(*) FROM sessions WHERE token_id = ?", [token_id(team.data, secret)])
        assert rows.fetchone()[0] == 0, "the revoke deleted its sessions"


def test_an_expired_session_is_refused(team: Team) -> None:
    secret = fresh_token(team)
    session = session_of(team, secret)
    assert page(team, session).status_code == 200
    with sqlite3.connect(team.data / "auth.sqlite") as db:
        db.execute("UPDATE sessions SET expires_ms = 0 WHERE token_id = ?", [token_id(team.data, secret)])
    assert page(team, session).status_code == 401
    with team.service.client(secret) as client:
        assert client.get(API).status_code == 200, "the token itself stays valid"


def test_the_session_is_stored_hashed(team: Team) -> None:
    session = session_of(team, fresh_token(team))
    raw = (team.data / "auth.sqlite").read_bytes() + b"".join(
        p.read_bytes() for p in team.data.glob("auth.sqlite-*")
    )
    assert session.encode() not in raw
