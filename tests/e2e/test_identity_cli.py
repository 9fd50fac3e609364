"""`--identity` on `self serve` and `self admin user|token`: what is refused, in one line that says
what to do, before anything binds or is written."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from service.adapters.auth import migrations
from tests.support.postgres import postgres
from tests.support.selfrun import base_env, run_self
from tests.support.servers import free_port


def _refused(*args: str) -> str:
    proc = run_self(args, base_env())
    assert proc.returncode != 0 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    return line


def test_an_identity_that_is_no_postgresql_url_is_refused(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    assert run_self(("admin", "workspace", "add", "team", "--data", data), base_env()).returncode == 0
    served = _refused("serve", "--data", data, "--port", str(free_port()), "--identity", "mysql://db/x")
    assert (
        served
        == "self: --identity: give a postgresql://USER@HOST:PORT/DATABASE URL, or none for DATA/auth.sqlite"
    )
    listed = _refused("admin", "user", "list", "--identity", "sqlite:///x")
    assert listed == "self: --identity takes a postgresql://USER@HOST:PORT/DATABASE URL"


def test_users_and_tokens_need_a_data_directory_or_an_identity() -> None:
    assert _refused("admin", "token", "list") == (
        "self: users and tokens live in a data directory or an identity database: give --data or --identity"
    )


def test_an_identity_database_away_is_named_with_when_to_retry() -> None:
    line = _refused(
        "admin", "user", "add", "ann", "--identity", f"postgresql://selfhub@127.0.0.1:{free_port()}/x"
    )
    assert line.startswith("self: the identity database cannot be reached (")
    assert line.endswith("retry in 2 s")


@pytest.mark.slow
def test_a_newer_identity_schema_is_refused_by_serve_and_admin(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    assert run_self(("admin", "workspace", "add", "team", "--data", data), base_env()).returncode == 0
    with postgres() as pg:
        assert run_self(("admin", "user", "add", "ann", "--identity", pg.url), base_env()).returncode == 0
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute("INSERT INTO selfhub_schema (version) VALUES (%s)", [migrations.SCHEMA + 1])
        expected = (
            f"self: the identity database is of schema {migrations.SCHEMA + 1}, newer than this release "
            f"reads ({migrations.SCHEMA}); run the release that migrated it"
        )
        assert _refused("serve", "--data", data, "--port", str(free_port()), "--identity", pg.url) == expected
        assert _refused("admin", "user", "list", "--identity", pg.url) == expected
