"""Fast paths stay light: `--version` and `context --plain` import no server, TUI or DB stack."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.selfrun import SELF, Store, base_env, describe

HEAVY = ("litestar", "rich", "sqlite_utils", "structlog")

# Runs the installed `self` script itself, then writes every imported top-level module name.
PROBE = """
import atexit, json, runpy, sys
out, script, args = sys.argv[1], sys.argv[2], sys.argv[3:]
def dump():
    with open(out, "w") as f:
        json.dump(sorted({m.split(".")[0] for m in sys.modules}), f)
atexit.register(dump)
sys.argv = [script, *args]
runpy.run_path(script, run_name="__main__")
"""


@pytest.mark.parametrize("args", [("--version",), ("context", "--plain")], ids=" ".join)
def test_fast_commands_import_no_heavy_stack(store: Store, tmp_path: Path, args: tuple[str, ...]) -> None:
    if args[0] == "context":
        store.ok("goal", "keep imports light")
    dump = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(dump), SELF, *args],
        env=store.env(),
        cwd=store.cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, describe(proc)
    assert ("keep imports light" if args[0] == "context" else "self ") in proc.stdout, proc.stdout
    modules = set(json.loads(dump.read_text()))
    assert "cli" in modules, "the probe did not run the self command"
    loaded = sorted(modules & set(HEAVY))
    assert not loaded, f"`self {' '.join(args)}` imports {loaded}"


def test_a_failing_command_imports_no_heavy_stack(tmp_path: Path) -> None:
    """The error mapping (cli/common.py: exit_for) knows the data directory's and the auth
    adapter's errors without loading SQLite."""
    dump = tmp_path / "modules.json"
    missing = tmp_path / "no-store"
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(dump), SELF, "--workspace", str(missing), "context"],
        env=base_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1 and "not a selfhub workspace" in proc.stderr, describe(proc)
    loaded = sorted(set(json.loads(dump.read_text())) & set(HEAVY))
    assert not loaded, f"a failing `self context` imports {loaded}"
