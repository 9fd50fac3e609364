"""Users and API tokens in `DATA/auth.sqlite`: the identity port's embedded adapter
(`port.py` says what a token and a session are). Several processes may use the file at once;
each thread of this one has its own connection.
"""

from __future__ import annotations

import hmac

import sqlite_utils

from service.adapters.auth.errors import NoSuchToken, NoSuchUser, NotAuthenticated, UserExists
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
from service.adapters.data.sqlite import connect, immediate
from service.adapters.data.workspaces import Data
from service.adapters.store.clock import now, wall_ms
from service.core.commands.team import role_of, valid_name

__all__ = ["PREFIX", "SESSION_PREFIX", "Auth", "Grant", "NewToken", "TokenRow", "digest", "new_secret"]

_SCHEMA = 2  # 2: the sessions table


class Auth:
    """The users and tokens of one data directory."""

    def __init__(self, data: Data) -> None:
        self.data = data
        self._held: PerThread[sqlite_utils.Database] = PerThread(lambda db: db.conn.close())
        if self.db.conn.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA:
            self._create()

    @property
    def db(self) -> sqlite_utils.Database:
        """This thread's connection."""
        db = self._held.get()
        if db is None:
            db = connect(self.data.auth_db, any_thread=True)
            self._held.put(db)
        return db

    def close(self) -> None:
        """Close every thread's connection (when no thread uses one any more)."""
        self._held.close()

    def __enter__(self) -> Auth:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _create(self) -> None:
        with immediate(self.db):
            self.db.table("users").create({"name": str, "created": str}, pk="name", if_not_exists=True)
            self.db.table("tokens").create(
                {
                    "id": str,
                    "digest": bytes,
                    "prefix": str,
                    "user": str,
                    "workspace": str,
                    "role": str,
                    "created": str,
                    "last_used": str,
                    "revoked": str,
                },
                pk="id",
                not_null={"digest", "prefix", "user", "workspace", "role", "created"},
                foreign_keys=[("user", "users", "name")],
                if_not_exists=True,
            )
            self.db.execute("CREATE UNIQUE INDEX IF NOT EXISTS tokens_digest ON tokens (digest)")
            self.db.execute("CREATE INDEX IF NOT EXISTS tokens_workspace ON tokens (workspace)")
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS sessions (digest BLOB PRIMARY KEY, "
                "token_id TEXT NOT NULL REFERENCES tokens (id), created TEXT NOT NULL, "
                "expires_ms INTEGER NOT NULL)"
            )
            self.db.execute("CREATE INDEX IF NOT EXISTS sessions_token ON sessions (token_id)")
            self.db.execute(f"PRAGMA user_version = {_SCHEMA}")

    # --- users ----------------------------------------------------------------------------

    def add_user(self, name: str) -> None:
        valid_name("user", name)
        with immediate(self.db):
            if self.db.table("users").count_where("name = ?", [name]):
                raise UserExists(name)
            self.db.table("users").insert({"name": name, "created": now()})

    def users(self) -> list[str]:
        return [row["name"] for row in self.db.table("users").rows_where(order_by="name")]

    # --- tokens ---------------------------------------------------------------------------

    def create_token(self, user: str, workspace: str, role: str) -> NewToken:
        """A new token for `user` on `workspace` with `role`; its secret is in the answer only."""
        granted = role_of(role)
        if not self.data.has(workspace):
            from service.adapters.data.errors import NoSuchWorkspace

            raise NoSuchWorkspace(workspace, self.data.names())
        token, token_id = new_secret(), new_token_id()
        with immediate(self.db):
            if not self.db.table("users").count_where("name = ?", [user]):
                raise NoSuchUser(user)
            self.db.table("tokens").insert(
                {
                    "id": token_id,
                    "digest": digest(token),
                    "prefix": token[:SHOWN],
                    "user": user,
                    "workspace": workspace,
                    "role": granted,
                    "created": now(),
                }
            )
        return NewToken(token_id, token, user, workspace, granted)

    def revoke(self, token_id: str) -> TokenRow:
        """Revoke a token from now on; revoking one twice keeps the first time."""
        with immediate(self.db):
            self.db.execute(
                "UPDATE tokens SET revoked = ? WHERE id = ? AND revoked IS NULL", [now(), token_id]
            )
            self.db.execute("DELETE FROM sessions WHERE token_id = ?", [token_id])
            rows = self._rows("id = ?", [token_id])
        if not rows:
            raise NoSuchToken(token_id)
        return rows[0]

    def tokens(self, workspace: str | None = None) -> list[TokenRow]:
        """Every token (of `workspace`), oldest first, without its secret."""
        if workspace is None:
            return self._rows(None, [])
        return self._rows("workspace = ?", [workspace])

    def _rows(self, where: str | None, args: list[str]) -> list[TokenRow]:
        fields = list(TokenRow.__struct_fields__)
        rows = self.db.table("tokens").rows_where(
            where, args, select=", ".join(fields), order_by="created, rowid"
        )
        return [TokenRow(**row) for row in rows]

    def authenticate(self, token: str) -> Grant:
        """What `token` grants; NotAuthenticated when it is malformed, unknown or revoked.

        The row is found by the token's SHA-256, so how long the lookup takes depends on that
        digest, which no caller can steer toward a stored one without the token itself; the
        digests are then compared in constant time."""
        if not well_formed(token, PREFIX):
            raise NotAuthenticated()
        wanted = digest(token)
        row = self.db.execute(
            "SELECT id, digest, user, workspace, role, revoked, last_used FROM tokens WHERE digest = ?",
            [wanted],
        ).fetchone()
        if row is None or not hmac.compare_digest(row[1], wanted) or row[5] is not None:
            raise NotAuthenticated()
        token_id, _, user, workspace, role, _, last_used = row
        stamp = now()
        if (last_used or "")[:USED_EVERY] != stamp[:USED_EVERY]:
            self.db.execute("UPDATE tokens SET last_used = ? WHERE id = ?", [stamp, token_id])
        return Grant(token_id, user, workspace, role_of(role))

    # --- web sessions ---------------------------------------------------------------------

    def open_session(self, token: str, lifetime_s: int) -> tuple[str, Grant]:
        """A new session of `token` (checked as `authenticate` checks it) that ends after
        `lifetime_s`: its id, the one time it is in hand, and the token's grant. Sessions
        expired by now are deleted on the way."""
        found = self.authenticate(token)
        session, stamp = new_secret(SESSION_PREFIX), wall_ms()
        with immediate(self.db):
            self.db.execute("DELETE FROM sessions WHERE expires_ms <= ?", [stamp])
            self.db.execute(
                "INSERT INTO sessions (digest, token_id, created, expires_ms) VALUES (?, ?, ?, ?)",
                [digest(session), found.token_id, now(), stamp + lifetime_s * 1000],
            )
        return session, found

    def session(self, session: str) -> Grant:
        """The grant of the token session `session` was opened with; NotAuthenticated when
        the session is malformed, unknown, ended or expired, or its token revoked."""
        if not well_formed(session, SESSION_PREFIX):
            raise NotAuthenticated()
        wanted = digest(session)
        row = self.db.execute(
            "SELECT s.digest, t.id, t.user, t.workspace, t.role FROM sessions s "
            "JOIN tokens t ON t.id = s.token_id "
            "WHERE s.digest = ? AND s.expires_ms > ? AND t.revoked IS NULL",
            [wanted, wall_ms()],
        ).fetchone()
        if row is None or not hmac.compare_digest(row[0], wanted):
            raise NotAuthenticated()
        return Grant(row[1], row[2], row[3], role_of(row[4]))

    def end_session(self, session: str) -> None:
        """End `session` (nothing when there is no such session)."""
        self.db.execute("DELETE FROM sessions WHERE digest = ?", [digest(session)])
