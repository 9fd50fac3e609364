"""Users and API tokens, in `DATA/auth.sqlite` (several processes may use it at once).

A token is `shb_` and 43 base-62 characters: 256 random bits. Only its SHA-256 is stored.
A slow password hash (bcrypt, scrypt, argon2) is for secrets a person picks, which can be
guessed; a 256-bit random token cannot, so one fast hash is as strong and keeps every
request's check cheap. The token is shown once, when it is created, and never again.

Every check reads the database: there is no cache, so a revoke takes effect at once.

A web session (`open_session`) is what the web view's cookie holds instead of the token: a
random id of 256 bits, stored as its SHA-256 with its expiry and the id of the token it was
opened with. It is valid while it has not expired, was not ended, and its token is valid and
unrevoked; revoking a token deletes its sessions. A session id is no token: `authenticate`
refuses it, so a stolen cookie opens no API.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

import msgspec

from service.adapters.auth.errors import NoSuchToken, NoSuchUser, NotAuthenticated, UserExists
from service.adapters.data.sqlite import connect, immediate
from service.adapters.data.workspaces import Data
from service.adapters.store.clock import now, wall_ms
from service.core.commands.team import Role, role_of, valid_name

PREFIX = "shb_"  # also in service/core/gates/secret_formats.py, so the sanitize gate refuses one
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_BODY = 43  # base-62 digits that hold 256 bits
SHOWN = len(PREFIX) + 4  # the characters of a token that lists show, to recognise it by
SESSION_PREFIX = "shs_"  # a web session's id: never accepted where a token is
_SCHEMA = 2  # 2: the sessions table
_USED_EVERY = 16  # last_used is rewritten when its minute changes (the first 16 characters)


class NewToken(msgspec.Struct, frozen=True):
    """A token just created: the one time its secret is in hand."""

    id: str
    token: str
    user: str
    workspace: str
    role: str


class TokenRow(msgspec.Struct, frozen=True):
    """A token as lists show it: never the token itself."""

    id: str
    prefix: str
    user: str
    workspace: str
    role: str
    created: str
    last_used: str | None
    revoked: str | None


class Grant(msgspec.Struct, frozen=True):
    """What a valid token lets its bearer do."""

    token_id: str
    user: str
    workspace: str
    role: Role


def new_secret(prefix: str = PREFIX) -> str:
    number = int.from_bytes(secrets.token_bytes(32), "big")
    digits = []
    for _ in range(_BODY):
        number, digit = divmod(number, 62)
        digits.append(_ALPHABET[digit])
    return prefix + "".join(digits)


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


class Auth:
    """The users and tokens of one data directory."""

    def __init__(self, data: Data) -> None:
        self.data = data
        self.db = connect(data.auth_db)
        if self.db.conn.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA:
            self._create()

    def close(self) -> None:
        self.db.conn.close()

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
        token, token_id = new_secret(), f"tk{secrets.token_hex(6)}"
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
        if not token.startswith(PREFIX) or len(token) != len(PREFIX) + _BODY:
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
        if (last_used or "")[:_USED_EVERY] != stamp[:_USED_EVERY]:
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
        if not session.startswith(SESSION_PREFIX) or len(session) != len(SESSION_PREFIX) + _BODY:
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
