"""Format versions: a data directory is stamped with this release's format when it is made;
`self serve` refuses a newer one and an older one (saying to upgrade); a store or a remote's
tree of a newer store format is refused with one line. Real `self` commands, real git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.kept import fixture_data
from tests.support.selfrun import base_env, describe, run_self
from tests.support.servers import free_port


def self_(*args: str) -> subprocess.CompletedProcess[str]:
    return run_self(args, base_env())


def serve_refused(data: Path) -> str:
    """`self serve` on `data`, required to exit 1 before it listens; its one line."""
    proc = self_("serve", "--data", str(data), "--port", str(free_port()))
    assert proc.returncode == 1, describe(proc)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.parametrize("first", [("workspace", "add", "acme"), ("user", "add", "ann")])
def test_a_new_data_directory_is_of_this_releases_format(tmp_path: Path, first: tuple[str, ...]) -> None:
    data = tmp_path / "data"
    data.mkdir()  # an empty folder (a new volume, say)
    made = self_("admin", *first, "--data", str(data))
    assert made.returncode == 0, describe(made)
    assert (data / "format").read_text() == "1\n"


def test_serve_refuses_a_newer_data_directory(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert self_("admin", "workspace", "add", "acme", "--data", str(data)).returncode == 0
    (data / "format").write_text("2\n")
    line = serve_refused(data)
    assert "is of format 2, newer than this release reads (1)" in line, line


def test_serve_refuses_the_kept_older_data_directory_and_says_to_upgrade(tmp_path: Path) -> None:
    data = fixture_data(tmp_path)
    line = serve_refused(data)
    assert "is of format 0, older than this release's (1)" in line, line
    assert f"run `self admin upgrade --data {data}`" in line, line


def test_a_store_of_a_newer_format_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert self_("init", str(store)).returncode == 0
    (store / "workspace.json").write_text('{"format":2}\n')
    proc = run_self(("log",), base_env() | {"SELF_WORKSPACE": str(store)})
    assert proc.returncode == 1, describe(proc)
    assert "workspace.json is of store format 2, newer than this release reads (1)" in proc.stderr


def test_a_store_written_as_format_1_reads_as_one_without_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert self_("init", str(store)).returncode == 0
    assert json.loads((store / "workspace.json").read_text()) == {}  # format 1 is never written
    (store / "workspace.json").write_text('{"format":1}\n')
    proc = run_self(("log",), base_env() | {"SELF_WORKSPACE": str(store)})
    assert proc.returncode == 0, describe(proc)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def test_sync_refuses_a_remote_of_a_newer_store_format(tmp_path: Path) -> None:
    """A release of a later store format publishes its tree: intake refuses it, one line, and
    the local store keeps its head."""
    store, remote, other = tmp_path / "store", tmp_path / "hub.git", tmp_path / "other"
    env = base_env() | {"SELF_WORKSPACE": str(store)}
    assert self_("init", str(store)).returncode == 0
    git(tmp_path, "init", "-q", "--bare", str(remote))
    for args in (("remote", "add", str(remote)), ("sync",)):
        proc = run_self(args, env)
        assert proc.returncode == 0, describe(proc)
    git(tmp_path, "clone", "-q", "-b", "main", str(remote), str(other))
    (other / "workspace.json").write_text('{"format":2}\n')
    git(other, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "format 2")
    git(other, "push", "-q", "origin", "HEAD:main")
    before = git(store, "rev-parse", "main")
    proc = run_self(("sync",), env)
    assert proc.returncode == 1, describe(proc)
    assert "workspace.json is of store format 2, newer than this release reads (1)" in proc.stderr
    assert git(store, "rev-parse", "main") == before


def test_the_import_string_app_refuses_the_kept_older_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ASGI server started by import string checks the format as `self serve` does."""
    from service.adapters.data.formats import FormatOlder
    from service.server.bootstrap import from_environment

    monkeypatch.setenv("SELF_DATA", str(fixture_data(tmp_path)))
    monkeypatch.delenv("SELF_SERVE_CONFIG", raising=False)
    with pytest.raises(FormatOlder, match="is of format 0, older than this release's"):
        from_environment()


def test_serve_refuses_a_format_file_that_holds_no_number(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert self_("admin", "workspace", "add", "acme", "--data", str(data)).returncode == 0
    (data / "format").write_text("one\n")
    line = serve_refused(data)
    assert line.endswith("format does not hold a format number; restore it from a backup"), line
