"""Search over HTTP (`GET /api/v1/search` of a real `self serve`) beside `self search` on the
same store.

Usage: python bench/search_http.py [PROJECTS] [RECORDS] [REQUESTS]   (default 100 10000 100)
One workspace in a new data directory with PROJECTS projects of RECORDS records each (twelve
words drawn from 2,000, a third at each exposure), committed as one commit. Prints the
machine, the time from start to /readyz (every log folded and indexed), then for each query
p50/p99 of REQUESTS sequential requests on one connection, and the median of a few
`self search --json` runs on the same store (one process each, as a person runs it).
"""

from __future__ import annotations

import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.adapters.auth.tokens import Auth
from service.adapters.data.workspaces import Data
from service.adapters.store import layout
from service.adapters.store.gitcommit import commit_files
from service.core.events.events import Event, ProjectAdded, canonical
from tests.support.builders import Log
from tests.support.servers import free_port

WORDS = [f"w{i}" for i in range(2000)] + ["deploy", "index", "search", "sync"]
# (query, project named): a word about 1 record in 170 holds, two of them, one every
# record of a third of the words holds (as a substring: w12, w120…, w1299), the same with no
# project named, and one no record holds
QUERIES = [
    ("deploy", "p000"),
    ("deploy sync", "p000"),
    ("w12", "p000"),
    ("w12", None),
    ("nothing-like-this", "p000"),
]
EXPOSURES = ("full", "index", "search")
CLI_RUNS = 5
SELF = str(Path(sys.executable).parent / "self")


def machine() -> str:
    lines = Path("/proc/meminfo").read_text().splitlines() if Path("/proc/meminfo").exists() else []
    mem = next((line.split()[1] for line in lines if line.startswith("MemTotal")), "?")
    gib = f"{int(mem) / 2**20:.0f} GiB" if mem.isdigit() else "?"
    return f"{platform.platform()}, {os.cpu_count()} cores, {gib}, Python {platform.python_version()}"


def build(data: Data, projects: int, records: int) -> None:
    """Workspace `team`: the projects' logs as the store lays them out, one commit."""
    rng = random.Random(projects * records)
    root = data.add("team").root
    files: dict[str, bytes] = {}
    workspace = Log("", base=1_700_000_000_000)
    for p in range(projects):
        slug = f"p{p:03d}"
        workspace.add("project.added", ProjectAdded(slug))
        log = Log(slug, base=1_800_000_000_000 + p * 100_000_000)
        for _ in range(records):
            text = " ".join(rng.choice(WORDS) for _ in range(12))
            log.entity(text, "note", exposure=rng.choice(EXPOSURES))
        files |= segments(log)
    files |= segments(workspace)
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(content)
    with data.open("team") as store, store.locked():
        commit_files(store.repo, files, "bench: logs")


def segments(log: Log) -> dict[str, bytes]:
    folder = layout.log_dir(log.project)
    step = layout.SEGMENT_EVENTS
    events: list[Event] = log.events
    return {
        f"{folder}/{layout.segment_name(k // step)}": b"".join(canonical(e) for e in events[k : k + step])
        for k in range(0, len(events), step)
    }


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.1f} ms"


def run(projects: int, records: int, requests: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Data(Path(tmp) / "data").claim()
        start = time.perf_counter()
        build(data, projects, records)
        print(f"{projects} projects x {records} records: written in {time.perf_counter() - start:.1f} s")
        with Auth(data) as auth:
            auth.add_user("bench")
            secret = auth.create_token("bench", "team", "reader").token
        port = free_port()
        log = (Path(tmp) / "serve.log").open("wb")
        config = Path(tmp) / "serve.toml"  # measured without the rate and time limits
        config.write_text('[limits]\nrate = 0\nrequest_s = 0\n[logging]\nlevel = "warning"\n')
        start = time.perf_counter()
        command = [SELF, "serve", "--data", str(data.root), "--port", str(port), "--config", str(config)]
        proc = subprocess.Popen(command, stdout=log, stderr=log)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_ready(url, proc)
            print(f"  start to /readyz (folded and indexed): {time.perf_counter() - start:.1f} s")
            headers = {"Authorization": f"Bearer {secret}"}
            with httpx.Client(base_url=url, headers=headers, timeout=600) as client:
                for q, project in QUERIES:
                    measure(client, data, q, project, requests)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
            log.close()


def measure(client: httpx.Client, data: Data, q: str, project: str | None, requests: int) -> None:
    params = {"q": q} | ({"project": project} if project else {})
    first = client.get("/api/v1/search", params=params)
    first.raise_for_status()
    times = []
    for _ in range(requests):
        start = time.perf_counter()
        client.get("/api/v1/search", params=params).raise_for_status()
        times.append(time.perf_counter() - start)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SELF_")}
    env |= {"SELF_WORKSPACE": str(data.path("team"))} | ({"SELF_PROJECT": project} if project else {})
    cli = []
    for _ in range(CLI_RUNS):
        start = time.perf_counter()
        subprocess.run([SELF, "search", q, "--json"], env=env, check=True, capture_output=True)
        cli.append(time.perf_counter() - start)
    matched, shown = first.json()["matched"], len(first.json()["hits"])
    print(
        f"  {q!r}, project {project or '(none)'} ({matched} matches, {shown} shown): "
        f"HTTP p50 {ms(percentile(times, 50))}, "
        f"p99 {ms(percentile(times, 99))}; self search median {ms(statistics.median(cli))}"
    )


def wait_ready(url: str, proc: subprocess.Popen[bytes]) -> None:
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"self serve exited {proc.returncode}")
        try:
            if httpx.get(url + "/readyz", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("projects", nargs="?", type=int, default=100)
    parser.add_argument("records", nargs="?", type=int, default=10000, help="records per project")
    parser.add_argument("requests", nargs="?", type=int, default=100, help="requests per query")
    given = parser.parse_args()
    print(machine())
    run(given.projects, given.records, given.requests)
