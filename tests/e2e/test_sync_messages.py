"""What `self sync` and `self remote list` say when there is nothing to sync with or the
remotes fail: one clear line each, never a library's internals."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.selfrun import Store, base_env, describe, run_self
from tests.support.servers import refusing_port


class _Failing(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(500)
        self.end_headers()
        self.wfile.write(b"the server broke")

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


@contextlib.contextmanager
def failing_http() -> Iterator[int]:
    """An HTTP server on 127.0.0.1 that answers every request with 500."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    worker = threading.Thread(target=server.serve_forever, daemon=True)
    worker.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        worker.join(5)


def test_sync_without_a_remote_says_how_to_add_one(store: Store) -> None:
    proc = store.run("sync")
    assert proc.returncode == 1
    assert "no remote yet" in proc.stderr and "self remote add URL" in proc.stderr
    assert "origin" not in proc.stderr


def test_remote_list_with_none_says_how_to_add_one(store: Store) -> None:
    assert "no remotes; add one with `self remote add URL`" in store.ok("remote", "list")
    assert store.json("remote", "list") == []


def test_an_http_failure_is_one_clean_line(store: Store) -> None:
    with refusing_port() as port:
        store.ok("remote", "add", f"http://127.0.0.1:{port}/ws.git", "--name", "refused")
        refused = store.run("sync", "refused", "--timeout", "5")
    assert refused.returncode == 1
    [line] = refused.stderr.splitlines()
    assert f"127.0.0.1:{port}" in line and "connection refused" in line
    assert "Pool" not in line and "Max retries" not in line and "Errno" not in line
    with failing_http() as served:
        store.ok("remote", "add", f"http://127.0.0.1:{served}/ws.git", "--name", "broken")
        broken = store.run("sync", "broken", "--timeout", "5")
    assert broken.returncode == 1
    [line] = broken.stderr.splitlines()
    assert f"127.0.0.1:{served}" in line and "HTTP 500" in line
    assert "info/refs" not in line and "unexpected http resp" not in line


def test_every_failing_remote_gets_its_own_line(store: Store) -> None:
    with refusing_port() as first, refusing_port() as second:
        for name, port in (("a", first), ("b", second)):
            store.ok("remote", "add", f"http://127.0.0.1:{port}/ws.git", "--name", name)
        proc = store.run("sync", "--timeout", "5")
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert [line.split(":")[:2] for line in lines] == [["self", " a"], ["self", " b"]]
    assert all(len(line) < 200 and "connection refused" in line for line in lines), lines


@pytest.mark.slow
def test_stores_made_apart_keep_every_project_description(tmp_path: Path) -> None:
    remote = tmp_path / "team.git"
    env = base_env()
    stores = {}
    for name, description in (("a", None), ("b", "the api service"), ("c", "the public api")):
        made = run_self(("init", str(tmp_path / name)), env)
        assert made.returncode == 0, describe(made)
        store = Store(tmp_path / name, None)
        store.ok("project", "add", "app", *(("--desc", description) if description else ()))
        store.ok("remote", "add", str(remote), *(("--init",) if name == "a" else ()))
        store.ok("sync")
        stores[name] = store
    stores["a"].ok("sync")
    for store in stores.values():
        [row] = store.json("project", "list")
        assert row["description"] == "the api service"
    overview = stores["a"].ok("status")
    assert "workspace health: 1 signal" in overview and "'the public api'" in overview
    assert "'the public api'" in stores["a"].ok("fold")
