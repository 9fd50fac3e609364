"""Stream subscribers that never read, against the `self` of the interpreter running this.

Usage: python bench/streams.py [--subscribers N] [--events E] [--batch B] [--text T] [--hold S]

Builds a data directory (one workspace, one project, a reader and a writer token) with the
`self` beside this interpreter, starts `self serve` on a loopback port (no rate limit), then:
- opens N streams (`GET …/stream`) on raw sockets with a 4 KiB receive buffer that are never
  read (from 127.0.0.2, .3 … so no address holds more than 200), and one stream that reads;
- posts E events (of T characters each) in posts of B events, timing `/healthz` every 50 ms
  all along: its worst latency while the events land, the server's resident set and the CPU
  seconds it burned; when the reading stream got the last event;
- holds the idle streams S seconds (default 8: past the 5 s after which a stream whose
  client reads nothing is dropped): the CPU seconds meanwhile, the streams still open;
- closes every idle socket at once: `/healthz` right after and its worst over the next 5 s,
  the CPU seconds those 5 s burned, and `stream_clients` (in /metrics) then (1: the reader).
Prints the machine and the code (git commit of the `self` package) first.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import httpx

WS, SLUG = "bench", "app"
BIN = Path(sys.executable).parent
SELF = str(BIN / "self") if (BIN / "self").exists() else (shutil.which("self") or "self")
PER_ADDRESS = 200  # under the service's default connections_per_client (256)


def machine() -> str:
    info = Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []
    cpu = next(
        (ln.split(":", 1)[1].strip() for ln in info if ln.startswith("model name")), platform.processor()
    )
    return f"{platform.platform()}, {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


def code() -> str:
    """Where the `self` this runs comes from, and its commit."""
    found = subprocess.run(
        [sys.executable, "-c", "import service; print(service.__file__)"],
        capture_output=True,
        text=True,
        cwd="/",
    )
    root = Path(found.stdout.strip()).parents[1]
    rev = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "service"], capture_output=True, text=True
    )
    return f"{rev.stdout.strip() or '?'}{' (service/ modified)' if dirty.stdout.strip() else ''}"


def self_run(*args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([SELF, *args], capture_output=True, text=True, env=(env or os.environ.copy()))
    if done.returncode != 0:
        raise SystemExit(f"self {' '.join(args)} failed: {done.stderr or done.stdout}")
    return done.stdout.strip()


def make_data(root: Path) -> tuple[Path, str, str]:
    data = root / "data"
    self_run("admin", "workspace", "add", WS, "--data", str(data))
    self_run("admin", "user", "add", "ann", "--data", str(data))
    tokens = [
        self_run("admin", "token", "create", "ann", "--workspace", WS, "--role", role, "--data", str(data))
        for role in ("writer", "reader")
    ]
    env = os.environ | {"SELF_WORKSPACE": str(data / "workspaces" / WS), "SELF_PROJECT": SLUG}
    self_run("project", "add", SLUG, "--desc", "the bench project", env=env)
    return data, tokens[0], tokens[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(root: Path, data: Path) -> Iterator[tuple[str, int]]:
    config = root / "serve.toml"
    config.write_text('[limits]\nrate = 0\n\n[logging]\nlevel = "warning"\n')
    port = free_port()
    log = (root / "serve.log").open("wb")
    proc = subprocess.Popen(
        [
            SELF,
            "serve",
            "--data",
            str(data),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--config",
            str(config),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        else:
            raise SystemExit("the service did not answer /healthz within 30 s")
        yield url, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Prober:
    """/healthz on a fresh connection every 50 ms, each latency with when it was asked."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            asked = time.monotonic()
            with suppress(httpx.HTTPError):
                httpx.get(self.url + "/healthz", timeout=120)
            self.seen.append((asked, time.monotonic() - asked))
            self._stop.wait(0.05)

    def worst(self, start: float, end: float) -> float:
        return max((took for asked, took in self.seen if start <= asked <= end), default=0.0)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def idle_streams(port: int, reader: str, n: int) -> list[socket.socket]:
    request = (
        f"GET /api/v1/workspaces/{WS}/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {reader}\r\n\r\n"
    ).encode()
    held = []
    for i in range(n):
        conn = socket.socket()
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # fills at once: never read
        conn.bind((f"127.0.0.{2 + i // PER_ADDRESS}", 0))
        conn.connect(("127.0.0.1", port))
        conn.sendall(request)
        held.append(conn)
    return held


class Reading:
    """One stream that reads: the monotonic time each SSE `data:` line came."""

    def __init__(self, url: str, reader: str) -> None:
        self.times: list[float] = []
        self.ended: str | None = None
        self._client = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {reader}"}, timeout=httpx.Timeout(30, read=300)
        )
        self.open = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()
        self.open.wait(10)

    def _run(self) -> None:
        try:
            with self._client.stream("GET", f"/api/v1/workspaces/{WS}/stream") as answer:
                self.open.set()
                for line in answer.iter_lines():
                    if line.startswith("data:"):
                        self.times.append(time.monotonic())
        except httpx.HTTPError as error:
            self.ended = type(error).__name__

    def close(self) -> None:
        self._client.close()


def streams_open(url: str) -> int:
    text = httpx.get(url + "/metrics", timeout=120).text
    for line in text.splitlines():
        if not line.startswith("#") and line.split(" ")[0].endswith("stream_clients"):
            return int(float(line.split()[-1]))
    return -1


def post_all(url: str, writer: str, events: int, batch: int, text: str) -> float:
    """Every event, `batch` a post; the seconds the posts took."""
    started = time.monotonic()
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {writer}"}, timeout=120) as client:
        for first in range(0, events, batch):
            body = [
                {
                    "type": "entity.confirmed",
                    "project": SLUG,
                    "payload": {"text": f"{n} {text}", "labels": ["x"]},
                }
                for n in range(first, min(events, first + batch))
            ]
            answer = client.post(f"/api/v1/workspaces/{WS}/events", json={"events": body})
            if answer.status_code != 201:
                raise SystemExit(f"a post answered {answer.status_code}: {answer.text[:300]}")
    return time.monotonic() - started


def run(args: argparse.Namespace) -> dict[str, float | int | str]:
    out: dict[str, float | int | str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-streams-") as tmp:
        root = Path(tmp)
        data, writer, reader = make_data(root)
        with serving(root, data) as (url, pid):
            prober = Prober(url)
            out["rss_start_mib"] = round(rss_mib(pid), 1)
            idle = idle_streams(int(url.rsplit(":", 1)[1]), reader, args.subscribers)
            reading = Reading(url, reader)
            time.sleep(1.0)
            out["streams_open"] = streams_open(url)
            cpu0, t0 = cpu_s(pid), time.monotonic()
            out["post_s"] = round(post_all(url, writer, args.events, args.batch, "x" * args.text), 2)
            t1 = time.monotonic()
            out["healthz_worst_posting_s"] = round(prober.worst(t0, t1), 3)
            out["cpu_posting_s"] = round(cpu_s(pid) - cpu0, 2)
            deadline = time.monotonic() + 60
            while len(reading.times) < args.events and time.monotonic() < deadline:
                time.sleep(0.05)
            out["reader_got"] = len(reading.times)
            out["reader_last_after_post_s"] = round(reading.times[-1] - t1, 2) if reading.times else -1
            out["rss_posted_mib"] = round(rss_mib(pid), 1)
            cpu1 = cpu_s(pid)
            time.sleep(args.hold)
            out["cpu_holding_s"] = round(cpu_s(pid) - cpu1, 2)
            out["rss_held_mib"] = round(rss_mib(pid), 1)
            out["streams_open_held"] = streams_open(url)
            cpu2, t2 = cpu_s(pid), time.monotonic()
            for conn in idle:
                conn.close()
            first = time.monotonic()
            httpx.get(url + "/healthz", timeout=120)
            out["healthz_after_close_s"] = round(time.monotonic() - first, 3)
            time.sleep(5.0)
            worst = max(prober.worst(t2, time.monotonic()), out["healthz_after_close_s"])
            out["healthz_worst_after_close_s"] = round(float(worst), 3)
            out["cpu_after_close_s"] = round(cpu_s(pid) - cpu2, 2)
            out["streams_open_after_close"] = streams_open(url)
            out["reader_ended"] = reading.ended or "no"
            out["rss_end_mib"] = round(rss_mib(pid), 1)
            reading.close()
            prober.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--subscribers", type=int, default=300)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--text", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=8.0)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"code: {code()}  self: {SELF}")
    print(f"{args.subscribers} idle subscribers, {args.events} events of {args.text} chars", end="")
    print(f" in posts of {args.batch}")
    print(json.dumps(run(args), indent=1))


if __name__ == "__main__":
    main()
