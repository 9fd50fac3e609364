"""`self context` and `self status` on the stress mix (`bench/mix.py`) at 1k and ~100k events,
for two builds side by side: medians of whole processes, and the ratio of 100k to 1k.

Usage: python bench/context.py [--before SELF] [--stores DIR] [--runs N] [SIZES...]
(default sizes 1000 100980). `--before` names another build's `self` (a checkout of the code
before a change, with its own virtualenv); each build reads its own copy of each store, so
neither reads caches the other wrote. Runs of the two builds and of the sizes alternate, so a
change in the machine's load falls on each. The outputs of the two builds are compared byte for byte.
Beside each median of wall time, the median of the CPU time the process used (user and
system): on a loaded machine the wall time waits for a core, the CPU time much less.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the package, not bench/service.py
sys.path.append(str(Path(__file__).resolve().parent))

from core import machine
from mix import SLUG, STRESS, build

AFTER = str(Path(sys.executable).with_name("self"))
COMMANDS = {"context": ["context", "--plain"], "status": ["status"]}
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def compiled(self_path: str) -> None:
    """The bytecode of the package a build's `self` imports written, as an installed one has it."""
    python = str(Path(self_path).with_name("python"))
    where = subprocess.run(
        [python, "-c", "import os, service; print(os.path.dirname(os.path.dirname(service.__file__)))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    for part in ("service", "cli"):
        subprocess.run([python, "-m", "compileall", "-q", os.path.join(where, part)], check=True)


def run(self_path: str, store: Path, command: str) -> tuple[float, float, str]:
    """Seconds one process takes, the CPU seconds it used, and the digest of what it printed."""
    env = {**ENV, "SELF_WORKSPACE": str(store), "SELF_PROJECT": SLUG}
    used = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run([self_path, *COMMANDS[command]], env=env, check=True, capture_output=True)
    took = time.perf_counter() - start
    return took, _children_cpu() - used, hashlib.sha256(done.stdout).hexdigest()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def stores(root: Path, size: int, builds: list[str]) -> dict[str, Path]:
    """One copy of the mix at `size` for each build (made once, reused under --stores)."""
    made = root / f"mix-{size}"
    if not (made / "store").exists():
        shutil.rmtree(made, ignore_errors=True)
        build(made, size)
    copies: dict[str, Path] = {}
    for name in builds:
        copy = root / f"mix-{size}-{name}"
        if not copy.exists():
            shutil.copytree(made / "store", copy)
        copies[name] = copy
    return copies


Medians = dict[str, tuple[float, float]]  # "build command" → wall and CPU seconds


def measure(
    builds: dict[str, str], copies: dict[int, dict[str, Path]], runs: int
) -> tuple[dict[int, Medians], dict[int, bool]]:
    """Medians per size, build and command (sizes and builds alternating), and per size
    whether the builds' outputs agree."""
    for held in copies.values():  # caches made; not timed
        for name, self_path in builds.items():
            for command in COMMANDS:
                run(self_path, held[name], command)
    times: dict[tuple[int, str], list[tuple[float, float]]] = {}
    digests: dict[tuple[int, str], set[str]] = {}
    for _ in range(runs):
        for size, held in copies.items():
            for command in COMMANDS:
                for name, self_path in builds.items():
                    took, cpu, digest = run(self_path, held[name], command)
                    times.setdefault((size, f"{name} {command}"), []).append((took, cpu))
                    digests.setdefault((size, command), set()).add(digest)
    medians: dict[int, Medians] = {size: {} for size in copies}
    for (size, key), taken in times.items():
        medians[size][key] = (statistics.median(t for t, _ in taken), statistics.median(c for _, c in taken))
    same = {size: all(len(d) == 1 for (at, _), d in digests.items() if at == size) for size in copies}
    return medians, same


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("sizes", nargs="*", type=int, metavar="SIZE", help=f"events (default 1000 {STRESS})")
    parser.add_argument("--before", help="another build's `self`, timed beside this one")
    parser.add_argument("--stores", type=Path, help="keep the stores here and reuse them in later runs")
    parser.add_argument("--runs", type=int, default=9, help="processes per command, build and size")
    args = parser.parse_args()
    sizes = sorted(args.sizes or [1_000, STRESS])
    builds = {"before": args.before, "after": AFTER} if args.before else {"after": AFTER}
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.2f}")
    for self_path in builds.values():
        compiled(self_path)
    with tempfile.TemporaryDirectory() as tmp:
        root = args.stores or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        copies = {size: stores(root, size, list(builds)) for size in sizes}
        results, same = measure(builds, copies, args.runs)
    for size in sizes:
        agree = "" if len(builds) == 1 else f"; outputs identical: {'yes' if same[size] else 'NO'}"
        timed = ", ".join(f"{k} {wall:.3f} s (CPU {cpu:.3f} s)" for k, (wall, cpu) in results[size].items())
        print(f"{size:>7,} events: {timed}{agree}")
    low, high = sizes[0], sizes[-1]
    print(f"median of {args.runs} processes each; ratio = {high:,} events / {low:,} events:")
    for key in results[low]:
        (wall_low, cpu_low), (wall_high, cpu_high) = results[low][key], results[high][key]
        print(f"  {key:>15}: {wall_low:.3f} s -> {wall_high:.3f} s = {wall_high / wall_low:.2f}x; "
              f"CPU {cpu_low:.3f} s -> {cpu_high:.3f} s = {cpu_high / cpu_low:.2f}x")  # fmt: skip
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
