"""The identity port's contract (`service/adapters/auth/port.py`), held by both adapters: SQLite in
a real data directory and a real PostgreSQL server. Users, tokens by their digests, revokes seen
at once by another instance, web sessions, and concurrent threads."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from service.adapters.auth.errors import NoSuchToken, NoSuchUser, NotAuthenticated, UserExists
from service.adapters.auth.port import PREFIX, Identity, new_secret
from service.adapters.auth.postgres import PgIdentity
from service.adapters.auth.tokens import Auth
from service.adapters.data.errors import NoSuchWorkspace
from service.adapters.data.workspaces import Data
from service.core.errors import Invalid
from tests.support.identity_db import fresh_database
from tests.support.postgres import Postgres, postgres

Opener = Callable[[], Identity]


@pytest.fixture(scope="module")
def server() -> Iterator[Postgres]:
    with postgres() as pg:
        yield pg


@pytest.fixture(params=["sqlite", "postgresql"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens one more instance of the same identity store, as another process would."""
    data = Data(tmp_path / "data")
    data.add("team").close()
    data.add("other").close()
    if request.param == "sqlite":
        made: list[Identity] = []

        def sqlite() -> Identity:
            made.append(Auth(data))
            return made[-1]

        yield sqlite
    else:
        url = fresh_database(request.getfixturevalue("server"))
        made = []

        def pg() -> Identity:
            made.append(PgIdentity(url, data))
            return made[-1]

        yield pg
    for each in made:
        each.close()


@pytest.fixture
def identity(opener: Opener) -> Identity:
    found = opener()
    found.add_user("ann")
    found.add_user("bob")
    return found


def test_a_token_opens_its_workspace_with_its_role(identity: Identity) -> None:
    new = identity.create_token("ann", "team", "writer")
    grant = identity.authenticate(new.token)
    assert (grant.user, grant.workspace, grant.role, grant.token_id) == ("ann", "team", "writer", new.id)
    assert new.token.startswith(PREFIX) and len(new.token) == 47


def test_users_are_listed_by_name_and_made_once(identity: Identity) -> None:
    identity.add_user("cy")
    assert identity.users() == ["ann", "bob", "cy"]
    with pytest.raises(UserExists):
        identity.add_user("ann")
    with pytest.raises(Invalid):
        identity.add_user("no spaces")


def test_a_revoke_is_refused_at_once_by_another_instance(identity: Identity, opener: Opener) -> None:
    other = opener()
    new = identity.create_token("ann", "team", "reader")
    assert other.authenticate(new.token).role == "reader"
    first = identity.revoke(new.id).revoked
    with pytest.raises(NotAuthenticated):
        other.authenticate(new.token)
    assert first is not None and other.revoke(new.id).revoked == first  # the first time kept
    with pytest.raises(NoSuchToken):
        other.revoke("tk000000000000")


@pytest.mark.parametrize("presented", ["", "shb_short", "Bearer x", "shs_" + "a" * 43, "no"])
def test_malformed_or_unknown_tokens_are_refused(identity: Identity, presented: str) -> None:
    identity.create_token("ann", "team", "admin")
    for token in (presented, new_secret()):
        with pytest.raises(NotAuthenticated):
            identity.authenticate(token)


def test_a_list_shows_ids_and_prefixes_oldest_first_never_a_token(identity: Identity) -> None:
    made = [identity.create_token(user, ws, "reader") for user, ws in (("ann", "team"), ("bob", "other"))]
    made.append(identity.create_token("bob", "team", "writer"))
    rows = identity.tokens()
    assert [r.id for r in rows] == [m.id for m in made]
    assert [r.prefix for r in rows] == [m.token[:8] for m in made]
    assert all(m.token not in repr(rows) for m in made)
    assert [r.id for r in identity.tokens("team")] == [made[0].id, made[2].id]
    assert rows[0].last_used is None and rows[0].revoked is None
    identity.authenticate(made[0].token)
    assert identity.tokens("team")[0].last_used is not None


def test_a_token_needs_a_known_user_workspace_and_role(identity: Identity) -> None:
    with pytest.raises(NoSuchUser):
        identity.create_token("cy", "team", "reader")
    with pytest.raises(NoSuchWorkspace):
        identity.create_token("ann", "nowhere", "reader")
    with pytest.raises(Invalid):
        identity.create_token("ann", "team", "owner")
    assert identity.tokens() == []


def test_a_session_grants_what_its_token_grants_until_ended(identity: Identity, opener: Opener) -> None:
    made = identity.create_token("ann", "team", "reader")
    session, grant = identity.open_session(made.token, 3600)
    other = opener()
    assert other.session(session) == grant == identity.authenticate(made.token)
    with pytest.raises(NotAuthenticated):
        identity.authenticate(session)
    with pytest.raises(NotAuthenticated):
        identity.session(made.token)
    other.end_session(session)
    with pytest.raises(NotAuthenticated):
        identity.session(session)
    other.end_session(session)  # ended twice: nothing


def test_expiry_and_revoke_end_sessions(identity: Identity) -> None:
    made = identity.create_token("ann", "team", "writer")
    expired, _ = identity.open_session(made.token, 0)
    with pytest.raises(NotAuthenticated):
        identity.session(expired)
    live, _ = identity.open_session(made.token, 3600)
    identity.revoke(made.id)
    with pytest.raises(NotAuthenticated):
        identity.session(live)
    with pytest.raises(NotAuthenticated):
        identity.open_session(made.token, 3600)


def test_one_instance_serves_many_threads_at_once(identity: Identity) -> None:
    made = [identity.create_token("ann", "team", "reader") for _ in range(4)]
    failures: list[BaseException] = []

    def check(token: str) -> None:
        try:
            for _ in range(25):
                assert identity.authenticate(token).user == "ann"
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=check, args=(m.token,)) for m in made]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_only_the_digest_is_stored_in_postgresql(server: Postgres, tmp_path: Path) -> None:
    url = fresh_database(server)
    with PgIdentity(url) as identity:
        identity.add_user("ann")
        new = identity.create_token("ann", "anywhere", "admin")  # no data directory: not checked
    with psycopg.connect(url) as conn:
        stored = conn.execute("SELECT * FROM tokens").fetchall()
        columns = [c.name for c in conn.execute("SELECT * FROM tokens LIMIT 0").description or ()]
    assert "token" not in columns
    assert all(
        new.token not in str(value) and new.token[4:].encode() != value for row in stored for value in row
    )


def test_a_thread_that_ends_leaves_no_sqlite_connection_open(tmp_path: Path) -> None:
    data = Data(tmp_path / "data")
    data.add("team").close()

    def held() -> int:
        fds = Path("/proc/self/fd")
        return sum(1 for fd in fds.iterdir() if _target(fd) == str(data.auth_db))

    with Auth(data) as auth:
        auth.add_user("ann")
        for _ in range(12):  # a worker pool's threads come and go
            thread = threading.Thread(target=auth.users)
            thread.start()
            thread.join()
        assert held() <= 2  # this thread's, and at most one not yet collected
    assert held() == 0


def _target(fd: Path) -> str | None:
    try:
        return str(fd.readlink())
    except OSError:
        return None
