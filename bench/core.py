"""Core benchmarks: `self context` as whole processes, full refold rate, peak memory.

Usage: python bench/core.py [SIZES...]   (default 10000 100000)
Prints each figure with the machine it ran on. Superself 0.7.0's figures from the issue are
printed as what they are, figures on another workload from elsewhere: no ratio is drawn
from them (a ratio needs both tools run on the same events in one run).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

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
from service.store import Store
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


def timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def bench_size(size: int, root: Path) -> dict[str, float]:
    store_dir = root / f"store-{size}"
    t = time.perf_counter()
    build(store_dir, "bench", size)
    generated = time.perf_counter() - t
    env = {**os.environ, "SELF_WORKSPACE": str(store_dir), "SELF_PROJECT": "bench"}
    context = [SELF, "context", "--plain"]
    first = timed(context, env)  # no fold cache yet: a full fold, then the cache is written
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
        "generated_s": generated,
        "context_first_s": first,
        "context_warm_s": warm,
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
        "sizes", nargs="*", type=int, metavar="SIZE", help="events per workspace (default 10000 100000)"
    )
    sizes = parser.parse_args().sizes or [10_000, 100_000]
    print(f"machine: {machine()}")
    version = subprocess.run([SELF, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"selfhub: {version}; `self --version` takes {timed([SELF, '--version'], dict(os.environ)):.3f} s")
    print(
        "baseline (Superself 0.7.0 on this machine class, from the issue): self context "
        "0.44 s @1k, 2.1 s @3k, 17.1 s @10k events; self fold 1.18 s @10k"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            r = bench_size(size, Path(tmp))
            print(
                f"{size:>9,} events: context first {r['context_first_s']:.3f} s, "
                f"warm {r['context_warm_s']:.3f} s, "
                f"after one append {r['context_after_append_s']:.3f} s | refold {r['refold_s']:.2f} s = "
                f"{r['refold_events_per_s']:,.0f} events/s, peak {r['refold_peak_mib']:.0f} MiB"
            )
            if size == 10_000:  # not a ratio: the two figures come from different events and runs
                print(
                    f"           Superself's 17.1 s @10k is on another workload, from the issue's "
                    f"figures; no ratio is drawn from it (warm context here: {r['context_warm_s']:.3f} s)"
                )


if __name__ == "__main__":
    main()
