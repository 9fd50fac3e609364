"""A real PostgreSQL server for the tests: `initdb` and `pg_ctl` from Debian's packages.

The server listens on 127.0.0.1 on a free port, with its socket and data in a folder of its
own, and is stopped by `pg_ctl stop` on that folder. `initdb` and `pg_ctl` refuse to run as
root, so under root they run as the unprivileged user `nobody` (`runuser`), which owns the
folder. `SELF_REQUIRE_POSTGRES=1` (set by `.ci/run`) turns a missing server into a failure
instead of a skip.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.servers import free_port

UNPRIVILEGED = "nobody"
REQUIRE_ENV = "SELF_REQUIRE_POSTGRES"


def binaries() -> Path | None:
    """The folder of the newest installed PostgreSQL server's programs, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _as_server_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", UNPRIVILEGED, "--", *argv] if os.geteuid() == 0 else argv


@dataclass(frozen=True)
class Postgres:
    """A running server: `url` is a libpq connection URL for its database `selfhub`."""

    root: Path
    port: int
    bin: Path

    @property
    def url(self) -> str:
        return f"postgresql://selfhub@127.0.0.1:{self.port}/selfhub"

    def admin_url(self) -> str:
        return f"postgresql://selfhub@127.0.0.1:{self.port}/postgres"

    def _ctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        argv = [str(self.bin / "pg_ctl"), "-D", str(self.root / "data"), *args]
        return subprocess.run(_as_server_user(argv), capture_output=True, text=True, check=check, timeout=120)

    def start(self) -> None:
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root}"
        self._ctl("-l", str(self.root / "server.log"), "-o", options, "-w", "start")

    def stop(self) -> None:
        """Stop the server now (`-m fast`); a test may start it again with `start`."""
        self._ctl("-m", "fast", "-w", "stop", check=False)

    def running(self) -> bool:
        return self._ctl("status", check=False).returncode == 0


def _initdb(root: Path, bin_dir: Path) -> None:
    os.chmod(root, 0o700)
    if os.geteuid() == 0:
        shutil.chown(root, UNPRIVILEGED)
    argv = [
        str(bin_dir / "initdb"),
        "-D",
        str(root / "data"),
        "-U",
        "selfhub",
        "--auth=trust",
        "--no-sync",
        "-E",
        "UTF8",
        "--locale=C",
    ]
    subprocess.run(_as_server_user(argv), capture_output=True, text=True, check=True, timeout=300)


def _create_database(server: Postgres) -> None:
    deadline = time.monotonic() + 30
    argv = [str(server.bin / "createdb"), "-h", "127.0.0.1", "-p", str(server.port), "-U", "selfhub"]
    argv.append("selfhub")
    while True:
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
        if done.returncode == 0 or time.monotonic() > deadline:
            assert done.returncode == 0, done.stderr
            return
        time.sleep(0.2)


@contextlib.contextmanager
def postgres() -> Iterator[Postgres]:
    """A new PostgreSQL server with an empty database `selfhub`, stopped on the way out.

    Skips the test when no server is installed, unless SELF_REQUIRE_POSTGRES=1."""
    bin_dir = binaries()
    if bin_dir is None:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail("no PostgreSQL server is installed (apt: postgresql), and SELF_REQUIRE_POSTGRES=1")
        pytest.skip("needs a PostgreSQL server (apt: postgresql)")
    root = Path(tempfile.mkdtemp(prefix="selfhub-pg-", dir="/tmp"))  # short: the socket path has a cap
    server = Postgres(root, free_port(), bin_dir)
    try:
        _initdb(root, bin_dir)
        server.start()
        _create_database(server)
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
