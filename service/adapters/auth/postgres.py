"""Users and API tokens in a PostgreSQL database: the identity port's shared adapter, for several
instances of the service (`self serve --identity postgresql://…`). `port.py` says what a token
and a session are; this holds them as `tokens.Auth` does, in the tables `migrations.py` makes.

Each thread keeps one connection (autocommit; a write of several statements is one
transaction), dialled at its first use and again after a failure: a database that went away is
`IdentityUnavailable` for as long as it is away, and the next request after it returns dials
anew, so an instance recovers by itself. A connection that was open before is tried once
more on a fresh one, since a restarted server drops every connection it had.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg
from psycopg.conninfo import make_conninfo

from service.adapters.auth import migrations
from service.adapters.auth.errors import (
    IdentityUnavailable,
    NoSuchToken,
    NoSuchUser,
    NotAuthenticated,
    UserExists,
)
from service.adapters.auth.held import PerThread
from service.adapters.auth.port import (
    PREFIX,
    SESSION_PREFIX,
    SHOWN,
    USED_EVERY,
    Grant,
    NewToken,
    TokenRow,
    digest,
    new_secret,
    new_token_id,
    well_formed,
)
from service.adapters.store.clock import now, wall_ms
from service.core.commands.team import role_of, valid_name

if TYPE_CHECKING:
    from service.adapters.data.workspaces import Data

T = TypeVar("T")
Connection = psycopg.Connection[tuple[Any, ...]]
CONNECT_TIMEOUT_S = 2  # a server that does not answer is unavailable after this long
# A server gone silent (a partition, not a refusal) fails an open connection within seconds too.
_SILENT = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 2,
    "keepalives_count": 3,
    "tcp_user_timeout": 5000,
}
_ROW = 'id, prefix, "user", workspace, role, created, last_used, revoked'


class PgIdentity:
    """The users and tokens of the PostgreSQL database at `url`. With `data`, a token is made
    only for a workspace that data directory holds."""

    def __init__(self, url: str, data: Data | None = None) -> None:
        self.url, self.data = url, data
        self._held: PerThread[Connection] = PerThread(lambda conn: conn.close())

    def __enter__(self) -> PgIdentity:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._held.close()

    def check(self) -> None:
        """Dial the database now, migrating its schema (IdentityNewer, IdentityUnavailable)."""
        self._run(lambda conn: None)

    # --- users ----------------------------------------------------------------------------

    def add_user(self, name: str) -> None:
        valid_name("user", name)

        def add(conn: Connection) -> None:
            done = conn.execute(
                "INSERT INTO users (name, created) VALUES (%s, %s) ON CONFLICT DO NOTHING", [name, now()]
            )
            if done.rowcount == 0:
                raise UserExists(name)

        self._run(add)

    def users(self) -> list[str]:
        return self._run(lambda conn: [r[0] for r in conn.execute("SELECT name FROM users ORDER BY name")])

    # --- tokens ---------------------------------------------------------------------------

    def create_token(self, user: str, workspace: str, role: str) -> NewToken:
        granted = role_of(role)
        if self.data is not None and not self.data.has(workspace):
            from service.adapters.data.errors import NoSuchWorkspace

            raise NoSuchWorkspace(workspace, self.data.names())
        token, token_id = new_secret(), new_token_id()

        def insert(conn: Connection) -> None:
            with conn.transaction():
                if conn.execute("SELECT 1 FROM users WHERE name = %s", [user]).fetchone() is None:
                    raise NoSuchUser(user)
                conn.execute(
                    'INSERT INTO tokens (id, digest, prefix, "user", workspace, role, created) '
                    "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    [token_id, digest(token), token[:SHOWN], user, workspace, granted, now()],
                )

        self._run(insert)
        return NewToken(token_id, token, user, workspace, granted)

    def revoke(self, token_id: str) -> TokenRow:
        def revoke(conn: Connection) -> list[TokenRow]:
            with conn.transaction():
                conn.execute(
                    "UPDATE tokens SET revoked = %s WHERE id = %s AND revoked IS NULL", [now(), token_id]
                )
                conn.execute("DELETE FROM sessions WHERE token_id = %s", [token_id])
                return _rows(conn, "WHERE id = %s", [token_id])

        rows = self._run(revoke)
        if not rows:
            raise NoSuchToken(token_id)
        return rows[0]

    def tokens(self, workspace: str | None = None) -> list[TokenRow]:
        if workspace is None:
            return self._run(lambda conn: _rows(conn, "", []))
        return self._run(lambda conn: _rows(conn, "WHERE workspace = %s", [workspace]))

    def authenticate(self, token: str) -> Grant:
        """As `tokens.Auth.authenticate`: the row found by the token's SHA-256, the digests then
        compared in constant time; its last use written when its minute changed."""
        if not well_formed(token, PREFIX):
            raise NotAuthenticated()
        return self._run(lambda conn: _authenticated(conn, digest(token)))

    # --- web sessions ---------------------------------------------------------------------

    def open_session(self, token: str, lifetime_s: int) -> tuple[str, Grant]:
        found = self.authenticate(token)
        session, stamp = new_secret(SESSION_PREFIX), wall_ms()

        def insert(conn: Connection) -> None:
            with conn.transaction():
                conn.execute("DELETE FROM sessions WHERE expires_ms <= %s", [stamp])
                conn.execute(
                    "INSERT INTO sessions (digest, token_id, created, expires_ms) VALUES (%s, %s, %s, %s)",
                    [digest(session), found.token_id, now(), stamp + lifetime_s * 1000],
                )

        self._run(insert)
        return session, found

    def session(self, session: str) -> Grant:
        if not well_formed(session, SESSION_PREFIX):
            raise NotAuthenticated()
        wanted = digest(session)

        def find(conn: Connection) -> tuple[Any, ...] | None:
            return conn.execute(
                'SELECT s.digest, t.id, t."user", t.workspace, t.role FROM sessions s '
                "JOIN tokens t ON t.id = s.token_id "
                "WHERE s.digest = %s AND s.expires_ms > %s AND t.revoked IS NULL",
                [wanted, wall_ms()],
            ).fetchone()

        row = self._run(find)
        if row is None or not hmac.compare_digest(bytes(row[0]), wanted):
            raise NotAuthenticated()
        return Grant(row[1], row[2], row[3], role_of(row[4]))

    def end_session(self, session: str) -> None:
        self._run(lambda conn: conn.execute("DELETE FROM sessions WHERE digest = %s", [digest(session)]))

    # --- connections ----------------------------------------------------------------------

    def _run(self, work: Callable[[Connection], T]) -> T:
        """`work` on this thread's connection; a connection found broken is dialled again once,
        and a database that cannot be reached is IdentityUnavailable."""
        for again in (False, True):
            conn, fresh = self._connection()
            try:
                return work(conn)
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                self._held.drop()
                if fresh or again:
                    raise IdentityUnavailable(_why(exc)) from None
        raise AssertionError("unreachable")

    def _connection(self) -> tuple[Connection, bool]:
        """This thread's connection, and whether it was dialled just now."""
        conn = self._held.get()
        if conn is not None and not conn.closed:
            return conn, False
        try:
            dsn = make_conninfo(self.url, connect_timeout=CONNECT_TIMEOUT_S, **_SILENT)
            conn = psycopg.connect(dsn, autocommit=True)
        except psycopg.Error as exc:
            raise IdentityUnavailable(_why(exc)) from None
        try:
            migrations.migrate(conn)
        except psycopg.Error as exc:
            conn.close()
            raise IdentityUnavailable(_why(exc)) from None
        except BaseException:
            conn.close()
            raise
        self._held.put(conn)
        return conn, True


def _authenticated(conn: Connection, wanted: bytes) -> Grant:
    row = conn.execute(
        'SELECT id, digest, "user", workspace, role, revoked, last_used FROM tokens WHERE digest = %s',
        [wanted],
    ).fetchone()
    if row is None or not hmac.compare_digest(bytes(row[1]), wanted) or row[5] is not None:
        raise NotAuthenticated()
    token_id, _, user, workspace, role, _, last_used = row
    stamp = now()
    if (last_used or "")[:USED_EVERY] != stamp[:USED_EVERY]:
        conn.execute("UPDATE tokens SET last_used = %s WHERE id = %s", [stamp, token_id])
    return Grant(token_id, user, workspace, role_of(role))


def _rows(conn: Connection, where: str, args: list[str]) -> list[TokenRow]:
    query = f"SELECT {_ROW} FROM tokens {where} ORDER BY created, seq"
    return [TokenRow(*row) for row in conn.execute(query, args)]


def _why(exc: BaseException) -> str:
    """The first line of a driver error, which names the server's address and never a password."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
