"""Machine-local facts: a pid stays in `.local/`, the log learns only that a run started."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.support.selfrun import Store


def test_pid_stays_local_and_status_judges_the_process(store: Store) -> None:
    unit = store.add("work", "run the soak test")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        store.ok("work", "started", unit, "--pid", str(sleeper.pid))
        last = store.json("log", "-n", "1")[-1]
        assert last["type"] == "work.run-started"
        assert last["payload"] == {"work": unit}

        pid = re.compile(rf"(?<![0-9A-Za-z]){sleeper.pid}(?![0-9A-Za-z])")
        leaks = [
            name
            for name, data in store.files().items()
            if pid.search(data.decode("utf-8", "replace")) or b'"pid"' in data
        ]
        assert not leaks, f"the pid {sleeper.pid} reached tracked files: {leaks}"
        local = (store.root / ".local").rglob("*")
        assert any(pid.search(p.read_text("utf-8", "replace")) for p in local if p.is_file()), (
            "the pid is not kept in .local/ either"
        )

        [run] = [p for p in store.json("status")["processes"] if p["work"] == unit]
        assert run["state"] == "running", run
    finally:
        sleeper.kill()
        sleeper.wait()

    lines = [line for line in store.ok("status").splitlines() if line.startswith(f"process {run['short']}")]
    assert len(lines) == 1, "`self status` does not list the stopped process"
    assert "running" not in lines[0] and ("exited" in lines[0] or "stale" in lines[0]), lines
