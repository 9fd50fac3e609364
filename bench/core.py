"""Core benchmarks: `self context`, a write (`self goal add`), `self status` and `self log -n
20` as whole processes, full refold rate, peak memory; the write and status rows side by side for every
size, each beside the smallest size's figure, with the growth exponent between sizes.

Usage: python bench/core.py [--stores DIR] [SIZES...]   (default 1000 10000 100000)
`--stores DIR` keeps each generated store as DIR/store-N and reuses it in later runs (a
reused store's first context has its caches already: that figure is left out, unless
`--cold` drops the store's caches first, so that two builds can be timed on one store).
The processes run with the package's bytecode compiled, as an installed package has it
(PYTHONDONTWRITEBYTECODE is dropped from their environment). Prints each figure with the
machine it ran on. Superself 0.7.0's figures from the issue are
printed as what they are, figures on another workload from elsewhere: no ratio is drawn
from them (a ratio needs both tools run on the same events in one run).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# the repository before bench/ (the script's folder), whose service.py would shadow the package
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parent))

from generate import build

SELF = str(Path(sys.executable).with_name("self"))
SUPERSELF = {
    10_000: ("self context", 17.1),
    1_000: ("self context", 0.44),
    3_000: ("self context", 2.1),
}
REFOLD = """
import resource, sys, time
from pathlib import Path
from service.adapters.store import Store
store = Store.open(Path(sys.argv[1]))
t = time.perf_counter()
state, _ = store.refold("bench")
took = time.perf_counter() - t
print(state.events, took, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
# the package `self` runs (this interpreter's: another checkout's when run with its Python)
PACKAGE = """import os, cli, service; print(os.path.dirname(os.path.dirname(service.__file__)))"""


def compile_package() -> None:
    """Write the bytecode of the package `self` imports, so no process compiles its sources."""
    where = subprocess.run([sys.executable, "-c", PACKAGE], check=True, capture_output=True, text=True)
    root = where.stdout.strip()
    for part in ("service", "cli"):
        subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(root, part)], check=True)


def timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


TIME = shutil.which("time", path="/usr/bin:/bin")


def peaked(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds and peak resident MiB of one process (GNU time's figure; 0 without it)."""
    if TIME is None:
        return timed(args, env), 0.0
    start = time.perf_counter()
    done = subprocess.run(
        [TIME, "-f", "%M", *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    took = time.perf_counter() - start
    return took, int(done.stderr.strip().splitlines()[-1]) / 1024


WRITES, STATUSES, LOGS = 5, 3, 3


def writes_and_status(env: dict[str, str]) -> dict[str, float]:
    """Medians of `self goal add`, `self status` and `self log -n 20` processes, with the peak
    of each kind."""
    subprocess.run([SELF, "status"], env=env, check=True, stdout=subprocess.DEVNULL)  # caches made
    adds = [peaked([SELF, "goal", "add", f"bench goal {n}"], env) for n in range(WRITES)]
    status = [peaked([SELF, "status"], env) for _ in range(STATUSES)]
    subprocess.run([SELF, "log", "-n", "20"], env=env, check=True, stdout=subprocess.DEVNULL)  # ids kept
    logs = [peaked([SELF, "log", "-n", "20"], env) for _ in range(LOGS)]
    return {
        "write_s": statistics.median(t for t, _ in adds),
        "write_peak_mib": max(m for _, m in adds),
        "status_s": statistics.median(t for t, _ in status),
        "status_peak_mib": max(m for _, m in status),
        "log_s": statistics.median(t for t, _ in logs),
        "log_peak_mib": max(m for _, m in logs),
    }


def bench_size(size: int, root: Path, cold: bool) -> dict[str, float]:
    store_dir = root / f"store-{size}"
    built = not store_dir.exists()
    if cold and not built:
        shutil.rmtree(store_dir / ".local" / "cache", ignore_errors=True)
    t = time.perf_counter()
    if built:
        build(store_dir, "bench", size)
    generated = time.perf_counter() - t
    env = {**ENV, "SELF_WORKSPACE": str(store_dir), "SELF_PROJECT": "bench"}
    context = [SELF, "context", "--plain"]
    # no fold cache yet: a full fold, and the caches built
    first, first_peak = peaked(context, env) if built or cold else (math.nan, math.nan)
    os.sync()  # the caches just written (350 MB at 1M) flushed, not left to slow what follows
    sliced = store_dir / ".local" / "cache" / "bench.hot.msgpack"
    slice_mb = sliced.stat().st_size / 1e6 if sliced.exists() else math.nan
    warm = statistics.median(timed(context, env) for _ in range(5))
    timed([SELF, "state", "add", "one more record", "--label", "note"], env)
    after_append = timed(context, env)
    out = subprocess.run(
        [sys.executable, "-c", REFOLD, str(store_dir)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    events, took, maxrss_kb = int(out[0]), float(out[1]), int(out[2])
    return {
        **writes_and_status(env),
        "generated_s": generated,
        "context_first_s": first,
        "context_first_peak_mib": first_peak,
        "context_warm_s": warm,
        "slice_mb": slice_mb,
        "context_after_append_s": after_append,
        "refold_s": took,
        "refold_events_per_s": events / took,
        "refold_peak_mib": maxrss_kb / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "sizes", nargs="*", type=int, metavar="SIZE", help="events per workspace (default 1000 10000 100000)"
    )
    parser.add_argument("--stores", type=Path, help="keep the stores here and reuse them in later runs")
    parser.add_argument(
        "--cold", action="store_true", help="drop a reused store's caches before its first context"
    )
    args = parser.parse_args()
    sizes = sorted(args.sizes or [1_000, 10_000, 100_000])
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.2f}")
    compile_package()
    version = subprocess.run([SELF, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"selfhub: {version}; `self --version` takes {timed([SELF, '--version'], ENV):.3f} s")
    print(
        "baseline (Superself 0.7.0 on this machine class, from the issue): self context "
        "0.44 s @1k, 2.1 s @3k, 17.1 s @10k events; self fold 1.18 s @10k"
    )
    rows: list[tuple[int, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = args.stores or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        for size in sizes:
            r = bench_size(size, root, args.cold)
            rows.append((size, r))
            print(
                f"{size:>9,} events: context first {r['context_first_s']:.3f} s "
                f"(peak {r['context_first_peak_mib']:.0f} MiB), "
                f"warm {r['context_warm_s']:.3f} s, "
                f"after one append {r['context_after_append_s']:.3f} s, "
                f"hot slice {r['slice_mb']:.2f} MB | refold {r['refold_s']:.2f} s = "
                f"{r['refold_events_per_s']:,.0f} events/s, peak {r['refold_peak_mib']:.0f} MiB"
            )
            if size == 10_000:  # not a ratio: the two figures come from different events and runs
                print(
                    f"           Superself's 17.1 s @10k is on another workload, from the issue's "
                    f"figures; no ratio is drawn from it (warm context here: {r['context_warm_s']:.3f} s)"
                )
    growth(rows)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


ROWS = (
    ("context_first_s", "first context", "context_first_peak_mib"),
    ("context_warm_s", "context", None),
    ("write_s", "write", "write_peak_mib"),
    ("status_s", "status", "status_peak_mib"),
    ("log_s", "log -n 20", "log_peak_mib"),
)


def growth(rows: list[tuple[int, dict[str, float]]]) -> None:
    """Each operation at each size against the smallest size, with the growth exponent k of
    time ~ events^k from the size before."""
    print(
        f"write = `self goal add` (median of {WRITES}), status = `self status` (median of {STATUSES}), "
        f"log = `self log -n 20` (median of {LOGS}):"
    )
    base_n, base = rows[0]
    for key, name, peak in ROWS:
        if math.isnan(base[key]):
            continue
        for (n, r), before in zip(rows, [None, *rows[:-1]], strict=True):
            exponent = ""
            if before is not None:
                k = math.log(r[key] / before[1][key]) / math.log(n / before[0])
                exponent = f", k={k:.2f} from {before[0]:,}"
            memory = f", peak {r[peak]:.0f} MiB" if peak else ""
            ratio = f"{r[key] / base[key]:.2f}x {base_n:,}{exponent}"
            print(f"{name:>13} {n:>9,} events: {r[key]:.3f} s ({ratio}){memory}")


if __name__ == "__main__":
    main()
