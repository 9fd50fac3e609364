"""Users and API tokens in a real data directory (real SQLite files, real stores)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli.problems import adapter_message
from service.adapters.auth.errors import NoSuchToken, NoSuchUser, NotAuthenticated, UserExists
from service.adapters.auth.tokens import PREFIX, Auth, new_secret
from service.adapters.data.errors import NoSuchWorkspace, WorkspaceExists
from service.adapters.data.workspaces import Data
from service.core.errors import Invalid
from service.core.gates.sanitize import Unsanitary, check_strings


@pytest.fixture
def data(tmp_path: Path) -> Data:
    data = Data(tmp_path / "data")
    data.add("team").close()
    data.add("other").close()
    with Auth(data) as auth:
        auth.add_user("ann")
        auth.add_user("bob")
    return data


def test_a_token_opens_its_workspace_with_its_role(data: Data) -> None:
    with Auth(data) as auth:
        new = auth.create_token("ann", "team", "writer")
        grant = auth.authenticate(new.token)
    assert (grant.user, grant.workspace, grant.role, grant.token_id) == ("ann", "team", "writer", new.id)
    assert new.token.startswith(PREFIX) and len(new.token) == 47


def test_only_the_tokens_digest_is_stored(data: Data) -> None:
    with Auth(data) as auth:
        new = auth.create_token("ann", "team", "admin")
    raw = b"".join(p.read_bytes() for p in data.root.glob("auth.sqlite*"))
    assert new.token.encode() not in raw
    assert new.token[len(PREFIX) :].encode() not in raw
    with sqlite3.connect(data.auth_db) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(tokens)")]
        stored = conn.execute("SELECT * FROM tokens").fetchall()
    assert "token" not in columns
    assert all(new.token not in str(value) for row in stored for value in row)


def test_a_revoke_takes_effect_at_once_in_another_process_view(data: Data) -> None:
    server, admin = Auth(data), Auth(data)  # two connections, as a service and the CLI hold
    try:
        new = admin.create_token("ann", "team", "reader")
        assert server.authenticate(new.token).role == "reader"
        admin.revoke(new.id)
        with pytest.raises(NotAuthenticated):
            server.authenticate(new.token)
    finally:
        server.close()
        admin.close()


def test_a_second_revoke_keeps_the_first_time(data: Data) -> None:
    with Auth(data) as auth:
        new = auth.create_token("ann", "team", "reader")
        first = auth.revoke(new.id).revoked
        assert first is not None
        assert auth.revoke(new.id).revoked == first
        with pytest.raises(NoSuchToken, match="no token with id") as missing:
            auth.revoke("tk000000000000")
        assert adapter_message(missing.value).endswith("; `self admin token list --data DIR` shows the ids")


@pytest.mark.parametrize(
    "presented",
    ["", "shb_", "ghp_" + "a" * 43, PREFIX + "a" * 42, PREFIX + "a" * 44, PREFIX + "é" * 43, "x" * 4000],
)
def test_malformed_or_unknown_tokens_are_refused(data: Data, presented: str) -> None:
    with Auth(data) as auth:
        auth.create_token("ann", "team", "reader")
        with pytest.raises(NotAuthenticated):
            auth.authenticate(presented)
        with pytest.raises(NotAuthenticated):
            auth.authenticate(new_secret())  # well formed, never issued


def test_a_list_shows_ids_and_prefixes_never_a_token(data: Data) -> None:
    with Auth(data) as auth:
        made = [
            auth.create_token("ann", "team", "reader"),
            auth.create_token("bob", "other", "writer"),
            auth.create_token("bob", "team", "admin"),
        ]
        auth.revoke(made[1].id)
        auth.authenticate(made[2].token)
        rows = auth.tokens()
        team = auth.tokens("team")
    shown = msgspec.json.encode(rows).decode()
    assert all(m.token not in shown and m.token[8:] not in shown for m in made)
    assert [r.id for r in rows] == [m.id for m in made]
    assert [r.prefix for r in rows] == [m.token[:8] for m in made]
    assert [(r.user, r.workspace, r.role) for r in rows] == [
        ("ann", "team", "reader"),
        ("bob", "other", "writer"),
        ("bob", "team", "admin"),
    ]
    assert [r.revoked is not None for r in rows] == [False, True, False]
    assert [r.last_used is not None for r in rows] == [False, False, True]
    assert [r.id for r in team] == [made[0].id, made[2].id]


def test_a_token_needs_a_known_user_workspace_and_role(data: Data) -> None:
    with Auth(data) as auth:
        with pytest.raises(NoSuchUser):
            auth.create_token("carol", "team", "reader")
        with pytest.raises(NoSuchWorkspace, match="known: other, team"):
            auth.create_token("ann", "nowhere", "reader")
        with pytest.raises(Invalid, match="not a role"):
            auth.create_token("ann", "team", "owner")
        with pytest.raises(UserExists):
            auth.add_user("ann")
        with pytest.raises(Invalid, match="valid user name"):
            auth.add_user("../ann")
        assert auth.tokens() == []
        assert auth.users() == ["ann", "bob"]


def test_the_sanitize_gate_refuses_a_token_as_created() -> None:
    token = new_secret()
    with pytest.raises(Unsanitary, match="selfhub API token"):
        check_strings({"note": f"use {token} to call the service"}, "")


def test_workspaces_are_stores_under_data_with_checked_names(tmp_path: Path) -> None:
    data = Data(tmp_path / "data")
    assert data.names() == []
    store = data.add("acme")
    store.close()
    assert store.root == (tmp_path / "data" / "workspaces" / "acme").resolve()
    assert (store.root / "workspace.json").is_file() and (store.root / ".git").is_dir()
    (tmp_path / "data" / "workspaces" / ".hidden").mkdir()
    (tmp_path / "data" / "workspaces" / "empty").mkdir()
    assert data.names() == ["acme"]
    with pytest.raises(WorkspaceExists):
        data.add("acme")
    for bad in ("..", "../escape", "a/b", ".git", "", "A"):
        with pytest.raises(Invalid):
            data.add(bad)
    assert not (tmp_path / "escape").exists()
    with pytest.raises(NoSuchWorkspace):
        data.open("empty")
    data.open("acme").close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(st.tuples(st.sampled_from(["create", "revoke", "check"]), st.integers(0, 9)), max_size=25)
)
def test_a_token_is_valid_exactly_from_its_creation_until_its_revoke(
    data: Data, steps: list[tuple[str, int]]
) -> None:
    """Random creates, revokes and checks through two connections (an admin's and a server's)."""
    admin, server = Auth(data), Auth(data)
    made: list[tuple[str, str, bool]] = []  # (id, token, revoked)
    try:
        for op, n in steps:
            if op == "create":
                new = admin.create_token("ann", "team", ("reader", "writer", "admin")[n % 3])
                made.append((new.id, new.token, False))
            elif made and op == "revoke":
                token_id, token, _ = made[n % len(made)]
                admin.revoke(token_id)
                made[n % len(made)] = (token_id, token, True)
            elif made:
                token_id, token, revoked = made[n % len(made)]
                if revoked:
                    with pytest.raises(NotAuthenticated):
                        server.authenticate(token)
                else:
                    assert server.authenticate(token).token_id == token_id
        listed = {r.id: r.revoked is not None for r in server.tokens()}
        assert all(listed[token_id] == revoked for token_id, _, revoked in made)
    finally:
        admin.close()
        server.close()
