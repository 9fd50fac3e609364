"""The PostgreSQL identity database's schema, versioned: the table `selfhub_schema` holds the
version its tables are at, and every migration after it is applied in order, in one
transaction under an advisory lock, so two instances starting at once migrate it once. A
database at a version this release does not know is refused (`IdentityNewer`).

Versions, and what each migration does:

- 1: users, tokens (their SHA-256 digests), web sessions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from service.adapters.auth.errors import IdentityNewer

if TYPE_CHECKING:
    import psycopg

LOCK = 0x5E1F_1D01  # the advisory lock's key, held while migrating

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE TABLE users (name text PRIMARY KEY, created text NOT NULL)",
        "CREATE TABLE tokens (id text PRIMARY KEY, digest bytea NOT NULL UNIQUE, prefix text NOT NULL, "
        '"user" text NOT NULL REFERENCES users (name), workspace text NOT NULL, role text NOT NULL, '
        "created text NOT NULL, last_used text, revoked text, seq bigserial NOT NULL)",
        "CREATE INDEX tokens_workspace ON tokens (workspace)",
        "CREATE TABLE sessions (digest bytea PRIMARY KEY, token_id text NOT NULL REFERENCES tokens (id), "
        "created text NOT NULL, expires_ms bigint NOT NULL)",
        "CREATE INDEX sessions_token ON sessions (token_id)",
    ),
)
SCHEMA = len(MIGRATIONS)


def version(conn: psycopg.Connection[Any]) -> int:
    """The schema's version (0: none made yet)."""
    made = conn.execute("SELECT to_regclass('selfhub_schema') IS NOT NULL").fetchone()
    if not made or not made[0]:
        return 0
    row = conn.execute("SELECT max(version) FROM selfhub_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def migrate(conn: psycopg.Connection[Any]) -> None:
    """Bring the schema to this release's version; IdentityNewer when it is past it."""
    found = version(conn)
    if found > SCHEMA:
        raise IdentityNewer(found, SCHEMA)
    if found == SCHEMA:
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK])
        conn.execute("CREATE TABLE IF NOT EXISTS selfhub_schema (version integer PRIMARY KEY)")
        found = version(conn)  # another instance may have migrated while this one waited
        if found > SCHEMA:
            raise IdentityNewer(found, SCHEMA)
        for number in range(found + 1, SCHEMA + 1):
            for statement in MIGRATIONS[number - 1]:
                conn.execute(statement)
            conn.execute("INSERT INTO selfhub_schema (version) VALUES (%s)", [number])
