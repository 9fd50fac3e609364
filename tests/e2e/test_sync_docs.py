"""docs/sync.md's walkthrough runs as written: two stores and a bare repository on disk."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.test_docs import sh_lines
from tests.support.selfrun import REPO, base_env

SYNC = REPO / "docs" / "sync.md"


def block() -> list[str]:
    return sh_lines(SYNC, "Sync with your team")


def test_the_sync_walkthrough_runs_line_by_line(tmp_path: Path) -> None:
    outputs = []
    env = base_env()
    for line in block():
        proc = subprocess.run(
            ["bash", "-e", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, f"{line!r} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        outputs.append((line, proc.stdout))
    summary = json.loads(next(out for line, out in outputs if "sync --json" in line))
    assert summary["pulled"] == 1 and summary["pushed"] == 0 and summary["retries"] == 0
    context = outputs[-1][1]
    assert "ship the sync beta" in context and "one log per project" in context

    def tracked(root: Path) -> dict[str, bytes]:
        return {
            str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).parts[0] not in (".git", ".local")
        }

    assert tracked(tmp_path / "alice") == tracked(tmp_path / "bob")
    for store in ("alice", "bob"):
        status = subprocess.run(
            ["git", "status", "--porcelain"], cwd=tmp_path / store, capture_output=True, text=True, check=True
        )
        assert status.stdout == "", f"{store}: git sees changes the store did not commit:\n{status.stdout}"
