"""The team service under load, each figure beside its baseline measured in the same run.

Usage: python bench/service.py [--events N] [--servers uvicorn,granian] [--seconds S]
                               [--memory-events M] [--webhook ROUNDS] [--git ROUNDS]

Builds a data directory with one workspace whose project holds N events (default 100,000),
a reader and a writer token, then for each ASGI server:
- GET context (plain) under 16 concurrent connections beside GET /healthz under the same load
  (wrk: requests/s and p99), and beside one `self context --plain` process per request;
- GET context again while one more connection posts events (one a post): each post moves the
  state, so the answers are rendered again rather than kept;
- POST events, one event a post, from one connection (each post its own commit) and from 16
  connections: events/s and p99 (group commit);
- the stream: 100 subscribers, the time from each post's 201 to every subscriber's receipt;
- the server's resident set after the load.
With --memory-events M, the resident set of a service holding a project of M events.
With --webhook R (and --servers '' for it alone), a remote-backed workspace of N events
mirrored from a bare repository under `git daemon`: R rounds of one event pushed by a clone,
then a signed push delivery to `POST /hooks/WS`, timed until the new record answers through
the API (p50, p99); beside it, in the same round, the same fetch by a `self sync` process on
another clone; then one event posted through the API, timed until the backend's main holds it.
Each round's connections to the backend (a git:// fetch or push is one) and bytes, counted by
a proxy in front of `git daemon`.
With --git R (and --servers '' for it alone), the git endpoint on a workspace of N events:
pushes a second with 8 git pushers of R rounds each (and how many were lost), then `git clone`
(median of 3), each beside C git's `git http-backend` serving a bare copy of the same store.
Needs `wrk` on PATH for the servers (Debian: apt-get install wrk). Prints the machine first.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generate import build  # noqa: E402

from service.adapters.auth.tokens import Auth  # noqa: E402
from service.adapters.data.workspaces import Data  # noqa: E402
from tests.support.servers import free_port  # noqa: E402

WS, SLUG = "team", "app"
SELF = shutil.which("self") or str(Path(sys.executable).with_name("self"))
NOTE = '{"type":"entity.confirmed","project":"app","payload":{"text":"a bench note","labels":["idea"]}}'
POST_LUA = f"""
wrk.method = "POST"
wrk.body = '{{"events":[{NOTE}]}}'
wrk.headers["Content-Type"] = "application/json"
"""


def machine() -> str:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    return f"{platform.platform()}, {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


def make_data(root: Path, events: int) -> tuple[Data, str, str]:
    data = Data(root).claim()
    build(data.path(WS), SLUG, events).close()
    with Auth(data) as auth:
        auth.add_user("bench")
        reader = auth.create_token("bench", WS, "reader").token
        writer = auth.create_token("bench", WS, "writer").token
    return data, reader, writer


class Server:
    def __init__(self, kind: str, data: Data, log: Path, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = log.with_suffix(".toml")  # one token makes every request: no rate limit
        config.write_text("[limits]\nrate = 0\n")
        env = (env or dict(os.environ)) | {"SELF_DATA": str(data.root), "SELF_SERVE_CONFIG": str(config)}
        if kind == "uvicorn":
            argv = [SELF, "serve", "--data", str(data.root), "--port", str(self.port)]
        else:
            granian = str(Path(sys.executable).with_name("granian"))
            argv = [
                granian,
                "--interface",
                "asgi",
                "--factory",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--workers",
                "1",
                "--log-level",
                "warning",
                "service.server.bootstrap:from_environment",
            ]
        self.log = log.open("wb")
        self.proc = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT, cwd=ROOT)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None:
                raise SystemExit(f"{kind} exited {self.proc.returncode}: see {log}")
            time.sleep(0.1)
        raise SystemExit(f"{kind} was not ready in time")

    def rss_mib(self) -> float:
        """Resident set of the server and its children (granian runs a worker process)."""
        pids = [self.proc.pid, *_children(self.proc.pid)]
        return sum(_rss_kib(p) for p in pids) / 1024

    def peak_mib(self) -> float:
        """The largest resident set the server's processes have had (VmHWM)."""
        pids = [self.proc.pid, *_children(self.proc.pid)]
        return sum(_rss_kib(p, "VmHWM:") for p in pids) / 1024

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        text = (task / "children").read_text() if (task / "children").exists() else ""
        for child in text.split():
            found += [int(child), *_children(int(child))]
    return found


def _rss_kib(pid: int, field: str = "VmRSS:") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    return 0


def wrk(
    url: str, token: str, seconds: int, script: Path | None = None, connections: int = 16
) -> tuple[float, float]:
    """Requests/s and p99 (ms) of `connections` connections for `seconds`."""
    argv = [
        "wrk",
        "-t1",
        f"-c{connections}",
        f"-d{seconds}s",
        "--latency",
        "-H",
        f"Authorization: Bearer {token}",
    ]
    if script is not None:
        argv += ["-s", str(script)]
    out = subprocess.run([*argv, url], capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    assert p99 is not None, out
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if non2xx:
        print(f"    ({non2xx.group(1)} answers were not 2xx)")
    return rate, float(p99.group(1)) * scale


def batches(url: str) -> tuple[float, float]:
    """Events written by group commits so far, and the commits, from the service's /metrics."""
    text = httpx.get(url + "/metrics").text
    total = sum(
        float(m) for m in re.findall(r"^selfhub_commit_batch_events_sum\{[^}]*\} ([\d.e+]+)", text, re.M)
    )
    count = sum(
        float(m) for m in re.findall(r"^selfhub_commit_batch_events_count\{[^}]*\} ([\d.e+]+)", text, re.M)
    )
    return total, count


def mean_batch(before: tuple[float, float], after: tuple[float, float]) -> float:
    """Events a commit wrote, on average, between two readings of `batches`."""
    commits = after[1] - before[1]
    return (after[0] - before[0]) / commits if commits else 0.0


def per_process(data: Data, runs: int) -> tuple[float, float]:
    """`self context --plain`, one process per request, 16 at a time: requests/s and p99 (ms)."""
    env = os.environ | {"SELF_WORKSPACE": str(data.path(WS)), "SELF_PROJECT": SLUG}

    def one(_: int) -> float:
        start = time.perf_counter()
        done = subprocess.run([SELF, "context", "--plain"], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"self context failed: {done.stderr}")
        return (time.perf_counter() - start) * 1000

    one(0)  # the store's caches are built once, as a CLI user's first call does
    start = time.perf_counter()
    with ThreadPoolExecutor(16) as pool:
        times = list(pool.map(one, range(runs)))
    return runs / (time.perf_counter() - start), percentile(times, 99)


def percentile(values: list[float], p: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def stream_delays(
    url: str, reader: str, writer: str, subscribers: int, posts: int
) -> tuple[list[float], list[float]]:
    """Milliseconds from each post's 201 to each subscriber's receipt of its event (negative:
    received before the poster had its 201), and from the post's sending to the receipt."""
    received: dict[str, list[float]] = {}
    ready = asyncio.Event()
    opened = 0
    limits = httpx.Limits(max_connections=subscribers + 4)
    headers = {"Authorization": f"Bearer {reader}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=None, limits=limits) as client:

        async def listen() -> None:
            nonlocal opened
            async with client.stream("GET", f"/api/v1/workspaces/{WS}/stream") as answer:
                opened += 1
                if opened == subscribers:
                    ready.set()
                async for line in answer.aiter_lines():
                    if line.startswith("data:"):  # the SSE id is an arrival cursor; the event id is here
                        event_id = json.loads(line[5:])["id"]
                        received.setdefault(event_id, []).append(time.perf_counter())

        tasks = [asyncio.create_task(listen()) for _ in range(subscribers)]
        await asyncio.wait_for(ready.wait(), 60)
        await asyncio.sleep(0.5)
        acked: dict[str, float] = {}
        sent: dict[str, float] = {}
        body = {"events": [{"type": "entity.confirmed", "project": SLUG, "payload": {"text": "streamed"}}]}
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {writer}"}) as poster:
            for _ in range(posts):
                start = time.perf_counter()
                answer = await poster.post(f"/api/v1/workspaces/{WS}/events", json=body)
                acked[answer.json()["ids"][0]] = time.perf_counter()
                sent[answer.json()["ids"][0]] = start
                await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    delays = [(t - acked[i]) * 1000 for i, times in received.items() if i in acked for t in times]
    whole = [(t - sent[i]) * 1000 for i, times in received.items() if i in sent for t in times]
    missing = posts * subscribers - len(delays)
    if missing:
        print(f"    ({missing} deliveries not seen within a second)")
    return delays, whole


def run_server(kind: str, data: Data, reader: str, writer: str, seconds: int, tmp: Path) -> dict[str, str]:
    server = Server(kind, data, tmp / f"{kind}.log")
    try:
        base = f"{server.url}/api/v1/workspaces/{WS}"
        warm = httpx.get(
            f"{base}/projects/{SLUG}/context?format=plain", headers={"Authorization": f"Bearer {reader}"}
        )
        warm.raise_for_status()  # the first answer renders; the rest are served from memory
        health = wrk(f"{server.url}/healthz", reader, seconds)
        context = wrk(f"{base}/projects/{SLUG}/context?format=plain", reader, seconds)
        script = tmp / "post.lua"
        script.write_text(POST_LUA)
        with ThreadPoolExecutor(2) as pool:  # each post moves the state: no answer is kept
            posting = pool.submit(wrk, f"{base}/events", writer, seconds, script, 1)
            written = wrk(f"{base}/projects/{SLUG}/context?format=plain", reader, seconds)
            beside = posting.result()
        alone = wrk(f"{base}/events", writer, seconds, script, connections=1)
        before = batches(server.url)
        posts = wrk(f"{base}/events", writer, seconds, script)
        batch = mean_batch(before, batches(server.url))
        many = wrk(f"{base}/events", writer, seconds, script, connections=64)
        script.write_text(POST_LUA.replace(NOTE, ",".join([NOTE] * 10)))
        tens = wrk(f"{base}/events", writer, seconds, script)
        delays, whole = asyncio.run(stream_delays(server.url, reader, writer, 100, 20))
        rss = server.rss_mib()
    finally:
        server.stop()
    return {
        "healthz": f"{health[0]:,.0f} req/s, p99 {health[1]:.1f} ms",
        "context": f"{context[0]:,.0f} req/s, p99 {context[1]:.1f} ms "
        f"({context[0] / health[0]:.0%} of /healthz's rate)",
        "context while posts land": f"{written[0]:,.0f} req/s, p99 {written[1]:.1f} ms, beside one "
        f"connection posting {beside[0]:,.0f} events/s",
        "post events, one connection": f"{alone[0]:,.0f} events/s (one a post: a commit each), "
        f"p99 {alone[1]:.1f} ms",
        "post events": f"{posts[0]:,.0f} events/s (one a post, 16 connections), p99 {posts[1]:.1f} ms, "
        f"{batch:.1f} events a commit",
        "post events, 64 connections": f"{many[0]:,.0f} events/s (one a post), p99 {many[1]:.1f} ms",
        "post events, ten a post": f"{tens[0] * 10:,.0f} events/s (16 connections), p99 {tens[1]:.1f} ms",
        "stream": f"100 subscribers × 20 posts: 201 to receipt p50 {statistics.median(delays):.1f} ms, "
        f"p99 {percentile(delays, 99):.1f} ms (negative: before the 201); from sending the post "
        f"p50 {statistics.median(whole):.1f} ms, p99 {percentile(whole, 99):.1f} ms",
        "resident set": f"{rss:,.0f} MiB",
        "_context_rate": str(context[0]),
    }


def memory(events: int, tmp: Path) -> None:
    data, reader, _ = make_data(tmp / "memory", events)
    start = time.perf_counter()
    server = Server("uvicorn", data, tmp / "memory.log")
    ready = time.perf_counter() - start
    try:
        print(
            f"memory: a service holding {events:,} events: {server.rss_mib():,.0f} MiB resident, "
            f"peak {server.peak_mib():,.0f} MiB (ready in {ready:.1f} s)"
        )
        url = f"{server.url}/api/v1/workspaces/{WS}/projects/{SLUG}/context?format=plain"
        took = []
        with httpx.Client(headers={"Authorization": f"Bearer {reader}"}, timeout=600) as client:
            for _ in range(3):
                start = time.perf_counter()
                client.get(url).raise_for_status()
                took.append(time.perf_counter() - start)
        print(
            f"  after three context requests (the first {took[0]:.2f} s, then {took[1] * 1000:.0f} and "
            f"{took[2] * 1000:.0f} ms): {server.rss_mib():,.0f} MiB resident, "
            f"peak {server.peak_mib():,.0f} MiB"
        )
    finally:
        server.stop()


HOOK_ENV = "BENCH_WEBHOOK_SECRET"
HOOK_SECRET = "a bench secret"


def webhook(events: int, rounds: int, tmp: Path) -> None:
    """Webhook delivery → the new state through the API, beside `self sync`'s same fetch; a
    write through the API → the backend holding it. The service and `self sync` reach the
    backend through a counting proxy: the connections (one a git:// fetch or push) and bytes
    each round took."""
    import hashlib
    import hmac
    import json

    from service.adapters.sync import Options, clone, remotes, sync
    from service.core.events.events import Assertion, Origin, make
    from tests.support.servers import git_daemon, proxy

    base = tmp / "git"
    base.mkdir()
    bare = base / "team.git"
    subprocess.run(["git", "init", "--bare", "-q", "--initial-branch=main", str(bare)], check=True)
    with git_daemon(base) as port, proxy(port) as (via, counter):
        url = f"git://127.0.0.1:{port}/team.git"
        counted = f"git://127.0.0.1:{via}/team.git"  # the service's and `self sync`'s way there
        start = time.perf_counter()
        author = build(tmp / "author", SLUG, events)
        remotes.add(author.repo, url)
        sync(author, options=Options())
        follower, _ = clone(counted, tmp / "follower")
        follower.close()
        print(f"webhook: a workspace of {events:,} events published ({time.perf_counter() - start:.1f} s)")
        data = tmp / "hooked"
        env = os.environ | {HOOK_ENV: HOOK_SECRET}
        subprocess.run(
            [SELF, "admin", "workspace", "add", WS, "--remote", counted, "--webhook-secret-env", HOOK_ENV,
             "--poll", "0", "--data", str(data)],
            check=True, env=env, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        with Auth(Data(data)) as auth:
            auth.add_user("bench")
            reader = auth.create_token("bench", WS, "reader").token
            writer = auth.create_token("bench", WS, "writer").token
        log = tmp / "webhook.log"
        server = Server("uvicorn", Data(data), log, env)
        hooked, synced, wrote = [], [], []
        links: dict[str, list[int]] = {"webhook": [], "sync": [], "write": []}
        sizes: dict[str, list[int]] = {"webhook": [], "sync": [], "write": []}

        def rounds_done(trigger: str) -> float:
            text = httpx.get(server.url + "/metrics", timeout=10).text
            key = f'selfhub_backend_syncs_total{{outcome="ok",trigger="{trigger}",workspace="{WS}"}}'
            return next((float(line.split()[-1]) for line in text.splitlines() if line.startswith(key)), 0.0)

        def settle(trigger: str, done: float, what: str) -> None:
            """Wait for the round `trigger` asked for to end, then note its connections and bytes."""
            began = time.perf_counter()
            while rounds_done(trigger) <= done:
                if time.perf_counter() - began > 60:
                    raise SystemExit(f"{what}: the round did not end within 60 s")
                time.sleep(0.01)
            links[what].append(counter.connections)
            sizes[what].append(counter.sent + counter.received)

        try:
            client = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {reader}"})
            for n in range(rounds):
                with author.transaction(SLUG) as tx:
                    new = tx.next_ids(1)[0]
                    text = f"pushed for the webhook bench {n}"
                    tx.append(
                        [
                            make(
                                new,
                                tx.now(),
                                "entity.proposed",
                                Origin("human", True),
                                SLUG,
                                Assertion(new, text),
                            )
                        ]
                    )
                head = sync(author, options=Options()).head
                body = json.dumps({"ref": "refs/heads/main", "after": head}).encode()
                sign = hmac.new(HOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()
                headers = {"X-Hub-Signature-256": f"sha256={sign}", "X-GitHub-Delivery": f"bench-{n}",
                           "Content-Type": "application/json"}  # fmt: skip
                record = f"/api/v1/workspaces/{WS}/projects/{SLUG}/entities/{new}?history=0"
                done = rounds_done("webhook")
                counter.reset()
                began = time.perf_counter()
                answer = client.post(f"/hooks/{WS}", content=body, headers=headers)
                assert answer.status_code == 202, answer.text
                while client.get(record).status_code != 200:
                    if time.perf_counter() - began > 60:
                        raise SystemExit(f"round {n}: the pushed record did not show within 60 s")
                    time.sleep(0.002)
                hooked.append((time.perf_counter() - began) * 1000)
                settle("webhook", done, "webhook")
                counter.reset()
                began = time.perf_counter()
                subprocess.run([SELF, "sync"], check=True, stdout=subprocess.DEVNULL,
                               env=os.environ | {"SELF_WORKSPACE": str(tmp / "follower")})  # fmt: skip
                synced.append((time.perf_counter() - began) * 1000)
                links["sync"].append(counter.connections)
                sizes["sync"].append(counter.sent + counter.received)
                # a write through the API, pushed by the round it asks for
                before = (bare / "refs" / "heads" / "main").read_text()
                done = rounds_done("write")
                counter.reset()
                began = time.perf_counter()
                posted = client.post(
                    f"/api/v1/workspaces/{WS}/events",
                    content=f'{{"events":[{NOTE}]}}',
                    headers={"Authorization": f"Bearer {writer}", "Content-Type": "application/json"},
                )
                assert posted.status_code == 201, posted.text
                while (bare / "refs" / "heads" / "main").read_text() == before:
                    if time.perf_counter() - began > 60:
                        raise SystemExit(f"round {n}: the write did not reach the backend within 60 s")
                    time.sleep(0.002)
                wrote.append((time.perf_counter() - began) * 1000)
                settle("write", done, "write")
            client.close()
        finally:
            server.stop()
            author.close()
    took: dict[str, list[float]] = {"webhook": [], "write": []}
    for line in log.read_text().splitlines():
        if line.startswith("{"):
            found = json.loads(line)
            if found.get("event") == "backend-sync" and found.get("trigger") in took:
                took[found["trigger"]].append(found["seconds"] * 1000)

    def each(what: str) -> str:
        return (
            f"{statistics.median(links[what]):g} connections to the backend a round "
            f"(most {max(links[what])}), {statistics.median(sizes[what]):,.0f} bytes"
        )

    print(
        f"  delivery → record through the API: p50 {statistics.median(hooked):.0f} ms, "
        f"p99 {percentile(hooked, 99):.0f} ms ({rounds} rounds, one event each); the round itself "
        f"p50 {statistics.median(took['webhook']):.0f} ms; {each('webhook')}"
    )
    print(
        f"  the same fetch by a `self sync` process: p50 {statistics.median(synced):.0f} ms, "
        f"p99 {percentile(synced, 99):.0f} ms; {each('sync')}"
    )
    print(
        f"  write through the API → on the backend: p50 {statistics.median(wrote):.0f} ms, "
        f"p99 {percentile(wrote, 99):.0f} ms; the round itself p50 "
        f"{statistics.median(took['write']):.0f} ms; {each('write')}"
    )


def git_endpoint(events: int, rounds: int, tmp: Path) -> None:
    """Pushes a second by 8 git pushers and clones, the service's git endpoint beside C git's
    `git http-backend` serving a bare copy of the same store (behind the tests' CGI server)."""
    from tests.support import gitclient, pushers
    from tests.support.sync_support import http_git

    data, _, _ = make_data(tmp / "gitdata", events)
    with Auth(data) as auth:
        tokens = [auth.create_token("bench", WS, "writer").token for _ in range(8)]
    bare = tmp / "repos" / f"{WS}.git"
    gitclient.ok(tmp, "clone", "-q", "--bare", str(data.path(WS)), str(bare))
    print(f"git endpoint: a workspace of {events:,} events; 8 git pushers x {rounds} rounds, no pause")
    server = Server("uvicorn", data, tmp / "git-serve.log")
    try:
        with http_git(bare.parent, "ann", "secret") as port:
            control = f"http://ann:secret@127.0.0.1:{port}/{WS}.git"
            ours = lambda token: gitclient.url(server.url, token, WS)  # noqa: E731
            for name, url_of, given in (
                ("endpoint", ours, tokens),
                ("git http-backend", lambda _: control, ["s"] * 8),
            ):
                work = tmp / f"push-{name.replace(' ', '-')}"
                done = pushers.run(url_of, work, given, git_pushers=8, self_pushers=0, rounds=rounds,
                                   self_rounds=0, pause=(0.0, 0.0))  # fmt: skip
                lost = pushers.missing(url_of(given[0]), work, done.acked)
                rate = done.pushes / done.seconds
                print(
                    f"  {name}: {rate:,.1f} pushes/s ({done.pushes} in {done.seconds:.1f} s, {done.rejected}"
                    f" turned away and pushed again), {len(lost)} lost, {len(done.failures)} failed"
                )
            for name, url in (("endpoint", ours(tokens[0])), ("git http-backend", control)):
                took = []
                for n in range(3):
                    target = tmp / f"clone-{name.replace(' ', '-')}-{n}"
                    start = time.perf_counter()
                    gitclient.ok(tmp, "clone", "-q", url, str(target))
                    took.append(time.perf_counter() - start)
                print(f"  git clone from {name}: median {statistics.median(took):.2f} s of 3")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--servers", default="uvicorn,granian")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--memory-events", type=int, default=0)
    parser.add_argument("--webhook", type=int, default=0, metavar="ROUNDS")
    parser.add_argument("--git", type=int, default=0, metavar="ROUNDS")
    args = parser.parse_args()
    servers = [kind for kind in args.servers.split(",") if kind]
    if servers and shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    print(machine())
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        if args.webhook:
            webhook(args.events, args.webhook, tmp)
        if args.git:
            git_endpoint(args.events, args.git, tmp)
        if args.memory_events:
            memory(args.memory_events, tmp)
        if not servers:
            return
        start = time.perf_counter()
        data, reader, writer = make_data(tmp / "data", args.events)
        print(f"data: one project of {args.events:,} events ({time.perf_counter() - start:.1f} s to build)")
        rate, p99 = per_process(data, 48)
        print(
            f"baseline, one `self context --plain` process per request (16 at a time): "
            f"{rate:,.1f} req/s, p99 {p99:.0f} ms"
        )
        for kind in servers:
            print(f"{kind}:")
            figures = run_server(kind, data, reader, writer, args.seconds, tmp)
            served = float(figures.pop("_context_rate"))
            for name, figure in figures.items():
                print(f"  {name}: {figure}")
            print(f"  context over HTTP vs one process per request: {served / rate:,.0f}×")


if __name__ == "__main__":
    main()
