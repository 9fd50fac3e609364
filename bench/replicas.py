"""Several replicas beside one instance, measured in the same run.

Usage: python bench/replicas.py [--seconds S] [--writers C] [--rounds R] [--before SELF] [--runs N]

A bare repository under `git daemon` is the git host, holding a workspace with one project;
a PostgreSQL server (Debian's, started for the run by tests/support/postgres.py) holds the
users and tokens of the replicas and carries their announcements. For each configuration,
C connections post one event a post for S seconds (writes a second, p50 and p99 of the
answer's time):
- one instance, writes acknowledged once committed here (pushed to the host after);
- one instance with --replicated: acknowledged once the host has them;
- two instances with --replicated on one host, the writers spread over both.
Then, on the two replicas, R rounds each of
- read-your-writes: a write on A, then a read on B naming its Selfhub-Commit (the read's
  time, beside a read on B naming nothing);
- the announcement: a write on A, then reads on B naming nothing until B serves it (the time
  from A's answer).
With `--before SELF` (the `self` executable of another build, e.g. a worktree of an earlier
commit with its own venv), the write rows of --replicated (one instance, two) run for both
builds, interleaved, `--runs` times, and their medians are printed; the read rows are skipped.
Each two-instance row says each instance's writes (every instance makes progress) and, from
the instances' `replicated-push` log lines (this build's), the batches pushed, the
compare-and-swap losses and where the pushes' time went.
Needs PostgreSQL's server programs (apt: postgresql) and git. Prints the machine first.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.postgres import postgres  # noqa: E402
from tests.support.selfrun import SELF, base_env  # noqa: E402
from tests.support.servers import free_port, git_daemon  # noqa: E402

WS, SLUG = "team", "app"


def machine() -> str:
    return f"{platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def self_run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    proc = subprocess.run(
        [SELF, *args], env=base_env() | (env or {}), cwd=cwd, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"self {' '.join(args)}: exit {proc.returncode}\n{proc.stderr}")
    return proc.stdout


def seed_host(tmp: Path, url: str) -> None:
    """The workspace with one project, published on the host by a CLI."""
    store = tmp / "seed"
    self_run("init", str(store))
    env = {"SELF_WORKSPACE": str(store), "SELF_PROJECT": SLUG}
    self_run("project", "add", SLUG, "--desc", "the bench's project", env=env)
    self_run("remote", "add", url, env=env)
    self_run("sync", env=env)


class Node:
    """`self serve` over a DATA of its own mirroring the host; its writer and reader tokens."""

    def __init__(
        self, root: Path, host: str, identity: str | None, replicated: bool, serve: str = SELF
    ) -> None:
        """`serve`: the `self` executable that serves (the build measured)."""
        self.data, self.port = root / "data", free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {"SELF_IDENTITY": identity} if identity else {}
        self_run(
            "admin",
            "workspace",
            "add",
            WS,
            "--remote",
            host,
            "--poll",
            "60",
            "--data",
            str(self.data),
            env=env,
        )
        user = f"bench-{root.name}"
        self_run("admin", "user", "add", user, "--data", str(self.data), env=env)
        token = ("admin", "token", "create", user, "--workspace", WS, "--data", str(self.data))
        self.writer = self_run(*token, "--role", "writer", env=env).strip()
        self.reader = self_run(*token, "--role", "reader", env=env).strip()
        config = root / "serve.toml"  # one token makes every write: no rate limit
        config.write_text('[limits]\nrate = 0\n[logging]\nlevel = "debug"\n')  # debug: each push's line
        self.log_path = root / "serve.log"
        argv = [serve, "serve", "--data", str(self.data), "--host", "127.0.0.1", "--port", str(self.port)]
        argv += ["--config", str(config)]
        argv += ["--replicated"] if replicated else []
        self.log = self.log_path.open("wb")
        self.proc = subprocess.Popen(argv, env=base_env() | env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not self._ready():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise SystemExit(f"{argv}: not ready (see {root / 'serve.log'})")
            time.sleep(0.1)

    def _ready(self) -> bool:
        try:
            return httpx.get(self.url + "/readyz", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    def pushes(self) -> list[dict[str, float]]:
        """The `replicated-push` lines logged so far (a build that logs none: [])."""
        found = []
        for line in self.log_path.read_bytes().splitlines():
            if b"replicated-push" in line:
                with contextlib.suppress(ValueError):
                    found.append(json.loads(line))
        return found

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=60)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def body(text: str) -> dict[str, object]:
    return {"events": [{"type": "entity.confirmed", "project": SLUG, "payload": {"text": text}}]}


EVENTS = f"/api/v1/workspaces/{WS}/events"
STATE = f"/api/v1/workspaces/{WS}/projects/{SLUG}/state"


Written = tuple[float, list[float], int]


def writes(nodes: list[Node], writers: int, seconds: float, per_node: list[int] | None = None) -> Written:
    """`writers` connections, spread over `nodes`, posting for `seconds`: writes a second,
    each answer's time (s), the answers that were not 201; `per_node` gets each node's
    acknowledged writes."""
    times: list[float] = []
    refused: list[int] = []
    counts = [0] * len(nodes)
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def writer(i: int) -> None:
        node = nodes[i % len(nodes)]
        mine = i % len(nodes)
        with node.client(node.writer) as client:
            n = 0
            while time.monotonic() < deadline:
                started = time.monotonic()
                answer = client.post(EVENTS, json=body(f"written by {i} #{n}"))
                took = time.monotonic() - started
                n += 1
                with lock:
                    if answer.status_code == 201:
                        times.append(took)
                        counts[mine] += 1
                    else:
                        refused.append(answer.status_code)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if per_node is not None:
        per_node[:] = counts
    return len(times) / (time.monotonic() - started), times, len(refused)


def p(values: list[float], q: float) -> float:
    """The q-quantile of `values`, in milliseconds."""
    if len(values) < 2:
        return values[0] * 1000 if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1] * 1000


def read_your_writes(a: Node, b: Node, rounds: int) -> tuple[list[float], list[float]]:
    """Per round: a read on B naming A's write's commit, and a read on B naming nothing."""
    named, plain = [], []
    with a.client(a.writer) as wa, b.client(b.reader) as rb:
        for i in range(rounds):
            commit = wa.post(EVENTS, json=body(f"read back {i}")).headers["Selfhub-Commit"]
            started = time.monotonic()
            answer = rb.get(STATE, headers={"Selfhub-Min-Commit": commit})
            named.append(time.monotonic() - started)
            assert answer.status_code == 200 and f"read back {i}" in answer.text, answer.text[:300]
            started = time.monotonic()
            rb.get(STATE)
            plain.append(time.monotonic() - started)
    return named, plain


def announced(a: Node, b: Node, rounds: int) -> list[float]:
    """Per round: the time from a write's answer on A to B serving it, asked for nothing."""
    took = []
    with a.client(a.writer) as wa, b.client(b.reader) as rb:
        for i in range(rounds):
            text = f"announced {i}"
            assert wa.post(EVENTS, json=body(text)).status_code == 201
            started = time.monotonic()
            while text not in rb.get(STATE).text:
                if time.monotonic() - started > 10:
                    raise SystemExit(f"B did not serve {text!r} within 10 s")
                time.sleep(0.005)
            took.append(time.monotonic() - started)
    return took


@contextmanager
def host(tmp: Path) -> Iterator[str]:
    base = tmp / "git"
    base.mkdir()
    subprocess.run(
        ["git", "init", "--bare", "-q", "--initial-branch=main", str(base / f"{WS}.git")], check=True
    )
    with git_daemon(base) as port:
        url = f"git://127.0.0.1:{port}/{WS}.git"
        seed_host(tmp, url)
        yield url


def row(what: str, rate: float, times: list[float], refused: int) -> str:
    return f"{what:<44} {rate:>8.0f} {p(times, 0.5):>9.1f} {p(times, 0.99):>9.1f} {refused:>8}"


def timed(what: str, values: list[float]) -> str:
    return f"{what:<44} {'':>8} {p(values, 0.5):>9.1f} {p(values, 0.99):>9.1f}"


def pushed(nodes: list[Node]) -> str:
    """The nodes' `replicated-push` lines in a few figures: batches, those that lost the
    compare-and-swap, the losses (the most in one batch), and the pushes' time spent
    fetching, rebasing, pushing, pausing, and in all."""
    lines = [line for node in nodes for line in node.pushes()]
    if not lines:
        return "no replicated-push lines (this build logs none)"
    lost = [int(line["lost"]) for line in lines]

    def total(key: str) -> float:
        return sum(float(line.get(key, 0.0)) for line in lines)

    return (
        f"{len(lines)} batches, {sum(1 for n in lost if n)} lost the CAS, {sum(lost)} losses "
        f"(at most {max(lost)} in one); fetching {total('fetch_s'):.1f} s, rebasing "
        f"{total('rebase_s'):.1f} s, pushing {total('push_s'):.1f} s, pausing {total('paused_s'):.1f} s "
        f"of {total('seconds'):.1f} s"
    )


def build_rows(
    tmp: Path, url: str, identity: str, exe: str, label: str, args: argparse.Namespace
) -> list[Written]:
    """One build's --replicated rows: one instance, then two with the writers on both."""
    tag = f"{label}-{uuid.uuid4().hex[:6]}"
    one = Node(tmp / f"{tag}-one", url, None, True, exe)
    alone = writes([one], args.writers, args.seconds)
    one.stop()
    print(row(f"{label}: one instance, --replicated", *alone), flush=True)
    a = Node(tmp / f"{tag}-a", url, identity, True, exe)
    b = Node(tmp / f"{tag}-b", url, identity, True, exe)
    per: list[int] = []
    both = writes([a, b], args.writers, args.seconds, per)
    a.stop()
    b.stop()
    print(row(f"{label}: two instances, writers on both", *both), flush=True)
    print(f"    A {per[0]} writes, B {per[1]}; {pushed([a, b])}", flush=True)
    return [alone, both]


def compare(tmp: Path, url: str, identity: str, args: argparse.Namespace) -> None:
    """The --replicated rows of the build at `args.before` and of this one, interleaved,
    `args.runs` times; then their medians."""
    builds = [("before", str(args.before)), ("after", SELF)]
    found: dict[str, list[list[Written]]] = {"before": [], "after": []}
    for run in range(args.runs):
        for label, exe in builds if run % 2 == 0 else builds[::-1]:
            found[label].append(build_rows(tmp, url, identity, exe, label, args))
    print(f"\nmedians of {args.runs} runs")
    for label, _ in builds:
        for i, what in enumerate(("one instance, --replicated", "two instances, writers on both")):
            runs = [rows[i] for rows in found[label]]
            rate = statistics.median(r[0] for r in runs)
            p50 = statistics.median(p(r[1], 0.5) for r in runs)
            p99 = statistics.median(p(r[1], 0.99) for r in runs)
            refused = sum(r[2] for r in runs)
            print(f"{f'{label}: {what}':<44} {rate:>8.0f} {p50:>9.1f} {p99:>9.1f} {refused:>8}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--before", type=Path, help="another build's `self`: its --replicated rows beside")
    parser.add_argument("--runs", type=int, default=3, help="with --before: the runs of both builds")
    args = parser.parse_args()
    if args.before is not None and not os.access(args.before, os.X_OK):
        raise SystemExit(f"--before {args.before}: not an executable; name another build's `self`")
    print(machine())
    print(f"{args.writers} writers, {args.seconds:g} s each; one event a post; the host under git daemon\n")
    print(f"{'writes (POST …/events)':<44} {'writes/s':>8} {'p50 ms':>9} {'p99 ms':>9} {'not 201':>8}")
    with tempfile.TemporaryDirectory(prefix="selfhub-bench-replicas-") as name, ExitStack() as stack:
        tmp = Path(name)
        pg = stack.enter_context(postgres())
        url = stack.enter_context(host(tmp))
        if args.before is not None:
            compare(tmp, url, pg.url, args)
            return
        for label, replicated in (("one instance", False), ("one instance, --replicated", True)):
            node = Node(tmp / label.replace(" ", "-").replace(",", ""), url, None, replicated)
            print(row(label, *writes([node], args.writers, args.seconds)), flush=True)
            node.stop()
        a = Node(tmp / "a", url, pg.url, True)
        stack.callback(a.stop)
        b = Node(tmp / "b", url, pg.url, True)
        stack.callback(b.stop)
        named, plain = read_your_writes(a, b, args.rounds)
        heard = announced(a, b, args.rounds)
        per: list[int] = []
        both = writes([a, b], args.writers, args.seconds, per)
        print(row("two instances, --replicated, writers on both", *both))
        print(f"    A {per[0]} writes, B {per[1]}; {pushed([a, b])}")
        print(f"\n{f'on the two replicas, {args.rounds} rounds':<44} {'':>8} {'p50 ms':>9} {'p99 ms':>9}")
        print(timed("read on B naming the write on A (its commit)", named))
        print(timed("read on B naming nothing", plain))
        print(timed("write on A answered → B serves it (announced)", heard))


if __name__ == "__main__":
    main()
