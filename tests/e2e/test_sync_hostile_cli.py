"""A hostile remote served by `git daemon`, met by `self sync` and `self clone`: a
clear one-line refusal, exit 1, nothing written (not `.git/config`, not outside the store),
main not moved, and the store works afterwards."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.forge import forge, head, hostile_trees, reset
from tests.support.selfrun import Store, base_env, describe, run_self
from tests.support.servers import git_daemon

Daemon = tuple[Path, int]  # the folder it serves, its port
CASES = {
    "dot": "'.' path component",
    "symlink": "projects/app/log/000001.jsonl",
    "gitlink": "projects/app/log/000001.jsonl",
    "non-utf8": "projects/app/log/\\xff\\xfe.jsonl",
    "unknown-path": "notes.txt",
    "bad-settings": "workspace.json",
    "leaky-event": "origin.pid",
}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    base = tmp_path_factory.mktemp("daemon")
    with git_daemon(base) as port:
        yield base, port


def _published(store: Store, daemon: tuple[Path, int]) -> tuple[Path, str]:
    """A bare repository served over git:// that `store` published to, with one record."""
    base, port = daemon
    name = f"w{time.monotonic_ns()}.git"
    subprocess.run(["git", "init", "--bare", "-q", str(base / name)], check=True)
    url = f"git://127.0.0.1:{port}/{name}"
    store.add("goal", "teams share one typed state")
    store.ok("remote", "add", url)
    store.ok("sync")
    return base / name, url


def _main(store: Store) -> bytes:
    return (store.root / ".git" / "refs" / "heads" / "main").read_bytes()


@pytest.mark.parametrize("case", sorted(CASES))
def test_sync_refuses_a_hostile_remote(
    store: Store, tmp_path: Path, daemon: tuple[Path, int], case: str
) -> None:
    path, url = _published(store, daemon)
    good = head(path)
    forge(path, hostile_trees(path)[case])
    before, config, main = store.files(), (store.root / ".git" / "config").read_bytes(), _main(store)

    proc = store.run("sync")
    assert proc.returncode == 1, describe(proc)
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, describe(proc)
    assert f"refused {url}" in proc.stderr and CASES[case] in proc.stderr, describe(proc)
    assert store.files() == before and _main(store) == main
    assert (store.root / ".git" / "config").read_bytes() == config
    assert not (tmp_path / "outside.txt").exists()

    store.add("goal", "the store still takes writes")
    reset(path, good)
    assert "1 pushed" in store.ok("sync")


@pytest.mark.parametrize("case", ["dot", "symlink", "gitlink", "leaky-event"])
def test_clone_refuses_a_hostile_remote(
    store: Store, tmp_path: Path, daemon: tuple[Path, int], case: str
) -> None:
    path, url = _published(store, daemon)
    forge(path, hostile_trees(path)[case])
    target = tmp_path / "bob"
    proc = run_self(("clone", url, str(target)), base_env(), cwd=tmp_path)
    assert proc.returncode == 1, describe(proc)
    assert "Traceback" not in proc.stderr and f"refused {url}" in proc.stderr, describe(proc)
    assert CASES[case] in proc.stderr, describe(proc)
    assert not target.exists() and not (tmp_path / "outside.txt").exists()


def test_a_symlinked_segment_stops_a_write_with_a_clear_message(store: Store, tmp_path: Path) -> None:
    """A link a clone made before the intake gate existed: the write is refused, the target
    outside the store is neither appended to nor committed."""
    store.add("goal", "teams share one typed state")
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"private\n")
    segment = store.log_file()
    segment.unlink()
    segment.symlink_to(outside)
    main = _main(store)
    proc = store.run("goal", "one more")
    assert proc.returncode == 1, describe(proc)
    assert "symbolic link" in proc.stderr and "Traceback" not in proc.stderr, describe(proc)
    assert outside.read_bytes() == b"private\n" and _main(store) == main
