"""`self sync` and `self clone` as processes against servers that trickle or refuse: one line,
exit 1, within the deadline, nothing left behind."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from tests.support.bad_servers import OPENINGS, REASON, refusing, trickler
from tests.support.selfrun import Store, base_env, describe, run_self
from tests.support.sync_support import bare, git_daemon


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, describe(proc)
    err = proc.stderr
    assert "Traceback" not in err and err.startswith("self: ") and err.count("\n") == 1, describe(proc)
    return err


def test_a_trickling_remote_ends_at_the_deadline(store: Store, tmp_path: Path) -> None:
    with trickler(OPENINGS["http"]) as port:
        url = f"http://127.0.0.1:{port}/ws.git"
        store.ok("remote", "add", url)
        before = store.files()
        started = time.monotonic()
        synced = store.run("sync", "--timeout", "1", "--deadline", "2")
        took = time.monotonic() - started
        cloned = run_self(
            ("clone", url, str(tmp_path / "c"), "--timeout", "1", "--deadline", "2"), base_env()
        )
    assert "did not finish within 2 s" in _one_line(synced)
    assert took < 12, f"`self sync --deadline 2` took {took:.1f} s"  # the trickle lasts 30 s
    assert store.files() == before
    assert "did not finish within 2 s" in _one_line(cloned)
    assert not (tmp_path / "c").exists()


def test_a_push_the_server_refuses_says_why_once(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "served"
    root.mkdir()
    repo = bare(root / "ws.git")
    with git_daemon(root) as port:
        store.ok("remote", "add", f"git://127.0.0.1:{port}/ws.git")
        store.ok("sync")
        refusing(repo)
        store.ok("idea", "one more idea")
        proc = store.run("sync", "--tries", "8")
    err = _one_line(proc)
    assert REASON in err and "refused the push" in err and "kept moving" not in err, err
