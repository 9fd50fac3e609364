"""A fresh PostgreSQL database per test on one server of the module (`tests/support/postgres.py`):
creating a database takes milliseconds, a server seconds."""

from __future__ import annotations

import secrets

import psycopg

from tests.support.postgres import Postgres


def fresh_database(server: Postgres) -> str:
    """The URL of a new empty database on `server`."""
    name = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(server.admin_url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]  # a name made here, no input
    return f"postgresql://selfhub@127.0.0.1:{server.port}/{name}"
