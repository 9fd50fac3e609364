"""The PostgreSQL of the compose profile `replicas` as its image runs it: deploy/replicas/
postgres-start.sh, as an unprivileged user (the image's `postgres`; `nobody` here), on an empty
data folder: refused with a clear line without a password; with one, a database `selfhub` the
role `selfhub` reaches over TCP with that password only, and a second start on the same folder
keeps it."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.postgres import UNPRIVILEGED, binaries
from tests.support.selfrun import REPO
from tests.support.servers import free_port

if TYPE_CHECKING:
    import psycopg

START = REPO / "deploy" / "replicas" / "postgres-start.sh"
PASSWORD = "a-password-for-the-test"
REFUSED = "selfhub-postgres: set SELFHUB_PG_PASSWORD (in .env beside docker-compose.yml)"


def as_server_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", UNPRIVILEGED, "--", *argv] if os.geteuid() == 0 else argv


@pytest.fixture
def data() -> Iterator[Path]:
    if binaries() is None:
        pytest.skip("needs a PostgreSQL server (apt: postgresql)")
    root = Path(tempfile.mkdtemp(prefix="selfhub-pgc-", dir="/tmp"))
    if os.geteuid() == 0:
        shutil.chown(root, UNPRIVILEGED)
    try:
        yield root / "data"
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def started(data: Path, port: int, password: str) -> Iterator[subprocess.Popen[bytes]]:
    """The start script on `data`, its output in `data`'s folder's `out.log`."""
    env = {"PATH": os.environ["PATH"], "PGDATA": str(data), "SELFHUB_PG_PASSWORD": password}
    argv = ["env", *(f"{k}={v}" for k, v in env.items()), "sh", str(START), "-c", f"port={port}"]
    with (data.parent / "out.log").open("ab") as out:
        proc = subprocess.Popen(as_server_user(argv), stdout=out, stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def connect(port: int, password: str) -> psycopg.Connection[Any]:
    import psycopg

    deadline = time.monotonic() + 60
    while True:
        try:
            return psycopg.connect(
                host="127.0.0.1",
                port=port,
                user="selfhub",
                dbname="selfhub",
                password=password,
                connect_timeout=2,
            )
        except psycopg.OperationalError as exc:
            if "password authentication failed" in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_without_a_password_it_says_what_to_set(data: Path) -> None:
    with started(data, free_port(), "") as proc:
        proc.wait(timeout=30)
    assert proc.returncode == 2
    assert (data.parent / "out.log").read_text().strip() == REFUSED


@pytest.mark.slow
def test_the_database_is_made_once_and_reached_with_the_password_only(data: Path) -> None:
    import psycopg

    port = free_port()
    with started(data, port, PASSWORD):
        with connect(port, PASSWORD) as conn:
            conn.execute("CREATE TABLE kept (n int)")
            conn.commit()
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            connect(port, "not-the-password")
    with started(data, port, PASSWORD), connect(port, PASSWORD) as conn:
        assert conn.execute("SELECT count(*) FROM kept").fetchone() == (0,)
