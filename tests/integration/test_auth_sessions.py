"""Web sessions in a real DATA/auth.sqlite: a session grants its token's grant until it
expires, is ended, or its token is revoked; it is no token and a token is no session; a
data directory made before sessions existed takes them on when opened."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from service.adapters.auth.errors import NotAuthenticated
from service.adapters.auth.tokens import Auth
from service.adapters.data.workspaces import Data


@pytest.fixture
def data(tmp_path: Path) -> Data:
    data = Data(tmp_path / "data")
    data.add("team").close()
    with Auth(data) as auth:
        auth.add_user("ann")
    return data


def test_a_session_grants_what_its_token_grants_until_ended(data: Data) -> None:
    with Auth(data) as auth:
        made = auth.create_token("ann", "team", "reader")
        session, grant = auth.open_session(made.token, 3600)
        assert auth.session(session) == grant == auth.authenticate(made.token)
        with pytest.raises(NotAuthenticated):
            auth.authenticate(session)
        with pytest.raises(NotAuthenticated):
            auth.session(made.token)
        auth.end_session(session)
        with pytest.raises(NotAuthenticated):
            auth.session(session)


def test_expiry_and_revoke_end_sessions(data: Data) -> None:
    with Auth(data) as auth:
        made = auth.create_token("ann", "team", "reader")
        expired, _ = auth.open_session(made.token, 0)
        with pytest.raises(NotAuthenticated):
            auth.session(expired)
        live, _ = auth.open_session(made.token, 3600)
        auth.revoke(made.id)
        with pytest.raises(NotAuthenticated):
            auth.session(live)
        with pytest.raises(NotAuthenticated):
            auth.open_session(made.token, 3600)
        assert auth.db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0


def test_an_older_auth_database_takes_sessions_on(data: Data) -> None:
    with Auth(data) as auth:
        made = auth.create_token("ann", "team", "reader")
    with sqlite3.connect(data.auth_db) as db:
        db.execute("DROP TABLE sessions")
        db.execute("PRAGMA user_version = 1")
    with Auth(data) as auth:
        session, _ = auth.open_session(made.token, 3600)
        assert auth.session(session).user == "ann"
