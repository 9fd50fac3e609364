"""The real concurrency test: 8 processes each append 250 events and sync repeatedly against
one `git daemon`; afterwards all 2,000 events are on the remote and on every replica exactly
once, and the replicas are byte-identical."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from service.adapters.store import Store
from service.adapters.sync import Options, clone, remotes, sync
from tests.support.sync_support import (
    bare,
    close_all,
    event_ids,
    files,
    folded,
    git_daemon,
    new_store,
    remote_ids,
    track,
)

PROCESSES = 8
EVENTS = 250
BATCH = 10
LIMIT = 150  # seconds for the whole run; it takes a fraction of that
REPO = Path(__file__).resolve().parents[2]

WRITER = """
import json, random, sys, time
from pathlib import Path
from service.adapters.store import Store
from service.adapters.sync import Options, sync
from tests.support.sync_support import append

root, events, batch = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
store = Store.open(root)
retries = syncs = 0
written = []
patient = Options(tries=200, timeout=20, pause=0.005, max_pause=0.25)
while len(written) < events:
    written += [e.id for e in append(store, min(batch, events - len(written)), text=root.name)]
    summary = sync(store, options=patient)
    retries += summary.retries
    syncs += 1
store.close()
print(json.dumps({"written": written, "retries": retries, "syncs": syncs}))
"""


@pytest.mark.slow
def test_eight_processes_against_one_git_daemon(tmp_path: Path) -> None:
    base = tmp_path / "served"
    base.mkdir()
    bare(base / "ws.git")
    fast = Options(tries=50, timeout=20, pause=0.01, max_pause=0.2)
    try:
        with git_daemon(base) as port:
            url = f"git://127.0.0.1:{port}/ws.git"
            seed = new_store(tmp_path / "seed")
            remotes.add(seed.repo, url)
            sync(seed, options=fast)
            roots = []
            for n in range(PROCESSES):
                store, _ = clone(url, tmp_path / f"p{n}", fast)
                store.close()
                roots.append(store.root)
            started = time.monotonic()
            env = {"PYTHONPATH": f"{REPO}{':'}{Path(__file__).parent}", "PATH": "/usr/bin:/bin"}
            procs = [
                subprocess.Popen(
                    [sys.executable, "-c", WRITER, str(root), str(EVENTS), str(BATCH)],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=env,
                )
                for root in roots
            ]
            reports = []
            for proc in procs:
                out, err = proc.communicate(timeout=max(1.0, LIMIT - (time.monotonic() - started)))
                assert proc.returncode == 0, err
                reports.append(json.loads(out))
            took = time.monotonic() - started
            stores = [track(seed)] + [track(Store.open(r)) for r in roots]
            for _ in range(2):
                for store in stores:
                    sync(store, options=fast)
            written = [i for report in reports for i in report["written"]]
            assert len(written) == len(set(written)) == PROCESSES * EVENTS
            on_remote = Counter(remote_ids(base / "ws.git"))
            assert set(written) <= set(on_remote)
            assert len(on_remote) == PROCESSES * EVENTS + 1  # and the project.added
            assert max(on_remote.values()) == 1, "an event is on the remote twice"
            expected_files, expected_state = files(stores[0]), folded(stores[0])
            for store in stores:
                assert Counter(event_ids(store)) == on_remote
                assert files(store) == expected_files
                assert folded(store) == expected_state
            retries = sum(r["retries"] for r in reports)
            syncs = sum(r["syncs"] for r in reports)
            print(f"\n{PROCESSES}×{EVENTS} events: {syncs} syncs, {retries} pushes retried, {took:.1f} s")
    finally:
        close_all()
