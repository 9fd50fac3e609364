"""Several real `self sync` processes against one remote on a path at once: every sync exits 0
(a push that meets another one on the remote's ref is retried like any other rejection), no
traceback, and every acknowledged event is on the remote exactly once afterwards."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.support.selfrun import SELF, Store, base_env, describe, run_self

pytestmark = pytest.mark.process  # real `self` processes: signals, locks, contention

CLONES = 3
ROUNDS = 10  # 30 syncs, three at a time


def syncs_at_once(clones: list[Store]) -> list[str]:
    """Start `self sync` in every clone at the same moment; what each that failed printed."""
    procs = [
        subprocess.Popen(
            [SELF, "sync", "--tries", "40"],
            env=clone.env(),
            cwd=clone.cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for clone in clones
    ]
    failed = []
    for clone, proc in zip(clones, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        if proc.returncode or "Traceback" in err:
            failed.append(f"{clone.root.name}: exit {proc.returncode}\n{out}{err}")
    return failed


def remote_ids(remote: Path) -> list[str]:
    """Every event id on the remote's main, read with git."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=remote, capture_output=True, text=True, check=True).stdout

    found = []
    for path in git("ls-tree", "-r", "--name-only", "main").split():
        if path.endswith(".jsonl"):
            lines = git("show", f"main:{path}").splitlines()
            found += [json.loads(line)["id"] for line in lines if line.strip()]
    return found


@pytest.mark.slow
def test_concurrent_syncs_to_a_path_remote_all_succeed(store: Store, tmp_path: Path) -> None:
    remote = tmp_path / "team.git"
    store.ok("remote", "add", str(remote), "--init")
    store.ok("sync")
    clones = []
    for n in range(CLONES):
        made = run_self(("clone", str(remote), str(tmp_path / f"c{n}")), base_env())
        assert made.returncode == 0, describe(made)
        clones.append(Store(tmp_path / f"c{n}", "app"))
    acknowledged: list[str] = []
    failures: list[str] = []
    for round_ in range(ROUNDS):
        for clone in clones:
            added = clone.json("state", "add", f"{clone.root.name} {round_}")
            acknowledged += [e["id"] for e in added["events"]]
        failures += syncs_at_once(clones)
    assert not failures, "\n".join(failures)
    for clone in clones:
        clone.ok("sync")
    on_remote = Counter(remote_ids(remote))
    assert {i: on_remote[i] for i in acknowledged} == dict.fromkeys(acknowledged, 1)
    assert max(on_remote.values()) == 1
    assert clones[0].files() == clones[1].files() == clones[2].files()
