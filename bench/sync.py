"""Sync benchmarks over `git daemon` on loopback, side by side with the git CLI on the same data.

Usage: python bench/sync.py [EVENTS ...]   (default 100000; SYNC_BENCH_ROUNDS rounds, default 10)

Builds a workspace of EVENTS events (bench/generate.py), publishes it to a bare repository
served by `git daemon`, then times whole processes:
  - `self clone` of the workspace, and `git clone` of the same repository;
  - one new event synced: `self sync` after one `self state add`, and with the git CLI
    (append the same kind of line to the last segment, `git commit -a`, `git pull --rebase`,
    `git push`, with `merge=union` on the logs as Superself sets it) in a git clone of the
    same repository, which the selfhub replicas write to in between;
  - the other replica pulling that event: `self sync`, and `git pull --rebase`;
  - the bytes of a one-event push, once with the log's last segment holding 990 events and
    once with it full (the event starts a fresh segment): `self sync` sends, beside what
    `git push` sends for the same line appended to the same file of a copy of the repository.
Bytes are counted by a TCP proxy between the client and the daemon (sent = client → server);
peak memory is the largest resident set of the process and the children it waited for (GNU
time's %M, when /usr/bin/time is there).
Every figure is the median, least and greatest of the rounds, printed with the machine and its
load average before and after. The processes run with the project's bytecode compiled (as an
installed package has it; PYTHONDONTWRITEBYTECODE is dropped from their environment).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from core import machine
from generate import build

from tests.support.servers import Counter, git_daemon, proxy

SELF = str(Path(sys.executable).with_name("self"))
GIT = shutil.which("git") or "git"
ROUNDS = int(os.environ.get("SYNC_BENCH_ROUNDS", "10"))
ROOT = Path(__file__).resolve().parents[1]


PEAK_KIB = [0]  # the peak resident memory of the last `run`'s process (0: unknown)
# GNU time reports its child's peak; a child forked from this (large) process would count the
# pages it shared with it before exec.
TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else None


def run(args: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, str]:
    with tempfile.NamedTemporaryFile() as peak:
        timed = [TIME, "-q", "-f", "%M", "-o", peak.name, *args] if TIME else args
        start = time.perf_counter()
        proc = subprocess.run(timed, env=env, cwd=cwd, capture_output=True, text=True, check=False)
        took = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
        PEAK_KIB[0] = int(Path(peak.name).read_text().split()[-1]) if TIME else 0
    return took, proc.stdout


def git_env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SELF_", "GIT_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@localhost",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@localhost",
    )
    return env


def one_line(store: Path) -> tuple[Path, bytes]:
    """The last segment of the bench log and a canonical event line after its last id."""
    from service.core.events import ids
    from service.core.events.events import Assertion, Origin, canonical, make

    segments = sorted((store / "projects" / "bench" / "log").glob("*.jsonl"))
    last = segments[-1]
    last_id = json.loads(last.read_bytes().splitlines()[-1])["id"]
    new_id = ids.next_id(last_id, int(time.time() * 1000), 12345)
    event = make(
        new_id,
        "2026-11-30T10:00:00.000Z",
        "entity.proposed",
        Origin("agent", False),
        "bench",
        Assertion(entity=new_id, text="one more record from git"),
    )
    return last, canonical(event)


def figures(rows: list[tuple[float, int, int]], peaks: list[int] | None = None) -> dict[str, object]:
    """Seconds (median, least, greatest, every round) and the median bytes of some rounds."""
    times = [r[0] for r in rows]
    return {
        "median_s": round(statistics.median(times), 3),
        "min_s": round(min(times), 3),
        "max_s": round(max(times), 3),
        "runs_s": [round(t, 3) for t in times],
        "sent_bytes": statistics.median(r[1] for r in rows),
        "received_bytes": statistics.median(r[2] for r in rows),
        **({"peak_rss_kib": statistics.median(peaks)} if peaks and all(peaks) else {}),
    }


def bench(size: int, root: Path) -> dict[str, object]:
    base = root / "served"
    base.mkdir()
    env = git_env(root)
    subprocess.run([GIT, "init", "--bare", "-q", "-b", "main", str(base / "ws.git")], env=env, check=True)
    t = time.perf_counter()
    store = root / "a"
    build(store, "bench", size).close()
    built = time.perf_counter() - t
    out: dict[str, object] = {"events": size, "build_s": round(built, 1)}
    with git_daemon(base) as port, proxy(port) as (via, counter):
        url = f"git://127.0.0.1:{via}/ws.git"
        senv = {**env, "SELF_WORKSPACE": str(store), "SELF_PROJECT": "bench"}
        run([SELF, "remote", "add", url], senv)
        took, _ = run([SELF, "sync", "--json"], senv)
        out["publish_s"] = round(took, 2)
        out["publish_sent_bytes"] = counter.sent

        clones, git_clones = [], []
        peaks: dict[str, list[int]] = {"clone": [], "git_clone": [], "pull": [], "git_pull": []}
        for n in range(ROUNDS):
            counter.reset()
            took, _ = run([SELF, "clone", url, str(root / f"b{n}")], env)
            clones.append((took, counter.received))
            peaks["clone"].append(PEAK_KIB[0])
            counter.reset()
            took, _ = run([GIT, "clone", "-q", url, str(root / f"g{n}")], env)
            git_clones.append((took, counter.received))
            peaks["git_clone"].append(PEAK_KIB[0])
            # what Superself does: union merges of the logs, so pull --rebase goes through
            (root / f"g{n}" / ".git" / "info" / "attributes").write_text("*.jsonl merge=union\n")
        out["clone"] = figures([(t, 0, received) for t, received in clones], peaks["clone"])
        out["git_clone"] = figures([(t, 0, received) for t, received in git_clones], peaks["git_clone"])
        for n in range(1, ROUNDS):
            shutil.rmtree(root / f"b{n}")

        syncs, pulls, git_syncs, git_pulls = [], [], [], []
        benv = {**env, "SELF_WORKSPACE": str(root / "b0"), "SELF_PROJECT": "bench"}
        for n in range(ROUNDS):
            run([SELF, "state", "add", f"one more record {n}", "--label", "note"], senv)
            counter.reset()
            took, printed = run([SELF, "sync", "--json"], senv)
            summary = json.loads(printed)
            assert summary["pushed"] == 1, summary
            syncs.append((took, counter.sent, counter.received))
            counter.reset()
            took, printed = run([SELF, "sync", "--json"], benv)
            assert json.loads(printed)["pulled"] >= 1, printed
            pulls.append((took, counter.sent, counter.received))
            peaks["pull"].append(PEAK_KIB[0])

            # the git CLI: the same kind of change, in a git clone of the same repository
            work = root / "g0"
            segment, line = one_line(work)
            counter.reset()
            start = time.perf_counter()
            with open(segment, "ab") as handle:
                handle.write(line)
            run([GIT, "commit", "-q", "-a", "-m", "one more event"], env, cwd=work)
            run([GIT, "pull", "-q", "--rebase"], env, cwd=work)
            run([GIT, "push", "-q", "origin", "main"], env, cwd=work)
            git_syncs.append((time.perf_counter() - start, counter.sent, counter.received))
            counter.reset()
            took, _ = run([GIT, "pull", "-q", "--rebase"], env, cwd=root / "g1")
            git_pulls.append((took, counter.sent, counter.received))
            peaks["git_pull"].append(PEAK_KIB[0])

        out["sync_one_event"] = figures(syncs)
        out["pull_one_event"] = figures(pulls, peaks["pull"])
        out["git_commit_pull_push"] = figures(git_syncs)
        out["git_pull"] = figures(git_pulls, peaks["git_pull"])
        segment_sizes = [p.stat().st_size for p in sorted((store / "projects/bench/log").glob("*.jsonl"))]
        out["push_bytes"] = {
            name: push_bytes(root, store, via, counter, held, env) for name, held in PUSH_CASES.items()
        }
        out["segments"] = len(segment_sizes)
        out["largest_segment_bytes"] = max(segment_sizes)
    return out


PUSH_CASES = {"tail_990": 990, "fresh_segment": 1000}  # events in the last segment before the push


def top_up(store_root: Path, held: int) -> None:
    """Append events to the bench log until its last segment holds `held` (1000: full)."""
    from service.adapters.store import Store
    from service.core.events.events import Assertion, Origin, make

    store = Store.open(store_root)
    try:
        segments = sorted((store_root / "projects/bench/log").glob("*.jsonl"))
        count = len(segments[-1].read_bytes().splitlines())
        need = (held - count) % 1000
        if need:
            with store.transaction("bench") as tx:
                origin = Origin("agent", True)
                tx.append(
                    [
                        make(
                            i,
                            tx.now(),
                            "entity.proposed",
                            origin,
                            "bench",
                            Assertion(entity=i, text=f"filler {k}"),
                        )
                        for k, i in enumerate(tx.next_ids(need))
                    ]
                )
    finally:
        store.close()


def push_bytes(
    root: Path, store: Path, port: int, counter: Counter, held: int, env: dict[str, str]
) -> dict[str, int]:
    """One event pushed with the last segment holding `held` events: the bytes `self sync`
    sends, and what `git push` sends for the same line in a copy of the same repository."""
    senv = {**env, "SELF_WORKSPACE": str(store), "SELF_PROJECT": "bench"}
    top_up(store, held)
    run([SELF, "sync", "--json"], senv)
    copy = root / "served" / f"git-{held}.git"
    shutil.copytree(root / "served" / "ws.git", copy)
    run([SELF, "state", "add", "one more record", "--label", "note"], senv)
    counter.reset()
    _, printed = run([SELF, "sync", "--json"], senv)
    summary = json.loads(printed)
    assert summary["pushed"] == 1, summary
    self_sent, self_counted = counter.sent, summary["bytes_sent"]

    segment = sorted((store / "projects/bench/log").glob("*.jsonl"))[-1]
    line = segment.read_bytes().splitlines(keepends=True)[-1]
    work = root / f"git-{held}"
    run([GIT, "clone", "-q", "-b", "main", str(copy), str(work)], env)
    with open(work / segment.relative_to(store), "ab") as handle:
        handle.write(line)
    run([GIT, "add", "-A"], env, cwd=work)
    run([GIT, "commit", "-q", "-m", "one more event"], env, cwd=work)
    counter.reset()
    run([GIT, "push", "-q", f"git://127.0.0.1:{port}/{copy.name}", "main"], env, cwd=work)
    return {
        "segment_events_before": held,
        "self_sync_sent_bytes": self_sent,
        "self_counted_sent_bytes": self_counted,
        "git_push_sent_bytes": counter.sent,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "events", nargs="*", type=int, metavar="EVENTS", help="events per workspace (default 100000)"
    )
    sizes = parser.parse_args().events or [100_000]
    version = subprocess.run([GIT, "--version"], capture_output=True, text=True).stdout.split()[-1]
    compileall.compile_dir(ROOT / "service", quiet=1)
    compileall.compile_dir(ROOT / "cli", quiet=1)
    print(f"machine: {machine()}; git {version}; {ROUNDS} rounds")
    for size in sizes:
        before = os.getloadavg()
        with tempfile.TemporaryDirectory() as folder:
            result = bench(size, Path(folder))
        after = os.getloadavg()
        print(json.dumps(result, indent=1))
        largest = result["largest_segment_bytes"]
        print(f"\n{size:,} events ({result['segments']} segments, largest {largest:,} bytes)")
        print(f"load average (1, 5, 15 min) before {_load(before)}, after {_load(after)}")
        rows = [
            ("self clone", result["clone"], "received_bytes", None),
            ("git clone", result["git_clone"], "received_bytes", result["clone"]),
            ("self sync (1 event)", result["sync_one_event"], "sent_bytes", None),
            (
                "git commit+pull --rebase+push",
                result["git_commit_pull_push"],
                "sent_bytes",
                result["sync_one_event"],
            ),
            ("self sync (pull 1)", result["pull_one_event"], "received_bytes", None),
            ("git pull --rebase", result["git_pull"], "received_bytes", result["pull_one_event"]),
        ]
        for label, row, moved, ours in rows:
            line = f"  {label:31} {_spread(row)}   {moved.split('_')[0]} {row[moved]:,.0f} B"  # type: ignore[index]
            if ours is not None:
                line += f"   ratio self/git {ours['median_s'] / row['median_s']:.2f}"  # type: ignore[index,operator]
            if "peak_rss_kib" in row:  # type: ignore[operator]
                line += f"   peak {row['peak_rss_kib'] / 1024:.1f} MiB"  # type: ignore[index]
            print(line)
        sent = result["sync_one_event"]["sent_bytes"]  # type: ignore[index]
        print(f"  one-event sync sent {sent / largest:.2f} of the largest segment")  # type: ignore[operator]
        for name, case in result["push_bytes"].items():  # type: ignore[attr-defined]
            ours, git = case["self_sync_sent_bytes"], case["git_push_sent_bytes"]
            print(
                f"  one-event push, {name} ({case['segment_events_before']} events in the last segment "
                f"before): self sync sent {ours:,} B, git push sent {git:,} B, ratio {ours / git:.2f}"
            )


def _spread(row: dict[str, object]) -> str:
    return f"{row['median_s']:.3f} s median ({row['min_s']:.3f}–{row['max_s']:.3f})"


def _load(values: tuple[float, float, float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


if __name__ == "__main__":
    main()
