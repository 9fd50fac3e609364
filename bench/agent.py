"""The agent's hot path: what a coding agent's hooks pay on every tool call and session start.

Usage: python bench/agent.py [--runs N] [--events N] [--store DIR] [--before SELF]

Medians of N runs of each process, in one run, each with its ratio to `python -c pass`:
`self --version`, `self gate` (a pre-tool-use hook's JSON on stdin), `self agent context` and
`self context --plain` on a local store of 10,000 events (bench/generate.py), each beside the
same command through the typer app (`python -m cli.main`, the path every command took before
cli/fast.py answered these). The runs are interleaved (one of each command, N times), so a
load that comes and goes weighs on every command alike. The processes run with the
package's bytecode compiled, as an installed package has it. `--store DIR` keeps the
generated store there and reuses it. `--before SELF` times another build's `self` (another
checkout's virtual environment) in the same interleaved runs, on a copy of the store of its own
(so that neither build's caches are the other's), each figure beside this build's.

Each process's CPU time (user and system, from the kernel's accounting of the child) is shown
beside its wall time: on a machine that others load, the wall time also holds the time a
process waited for a core, the CPU time does not.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parent))

from core import ENV, PACKAGE, compile_package, machine
from generate import build

SELF = str(Path(sys.executable).with_name("self"))
TYPER = [sys.executable, "-m", "cli.main"]
HOOK = json.dumps(
    {
        "session_id": "5f0c2b1e",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": ".",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status --short", "description": "show the changes"},
    }
)
COMMANDS: list[tuple[str, list[str], str | None]] = [
    ("--version", ["--version"], None),
    ("gate", ["gate"], HOOK),
    ("agent context", ["agent", "context"], None),
    ("context --plain", ["context", "--plain"], None),
]


Case = tuple[list[str], str | None, dict[str, str]]  # arguments, stdin, environment


def timed(args: list[str], env: dict[str, str], stdin: str | None) -> tuple[float, float]:
    """The wall and CPU seconds of one process."""
    used = _children_cpu()
    start = time.perf_counter()
    subprocess.run(args, env=env, input=stdin, text=True, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start, _children_cpu() - used


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def medians(env: dict[str, str], runs: int, before: Build | None) -> dict[str, tuple[float, float]]:
    """Median wall and CPU seconds of each process, the runs interleaved."""
    cases: dict[str, Case] = {"python -c pass": ([sys.executable, "-c", "pass"], None, env)}
    for name, args, stdin in COMMANDS:
        cases[f"self {name}"] = ([SELF, *args], stdin, env)
        if before is not None:
            cases[f"before {name}"] = ([before.executable, *args], stdin, before.env)
        cases[f"typer {name}"] = ([*TYPER, *args], stdin, env)
    for args, stdin, case_env in cases.values():  # warm the page cache and the store's caches
        timed(args, case_env, stdin)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, (args, stdin, case_env) in cases.items():
            times[name].append(timed(args, case_env, stdin))
    return {
        name: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
        for name, t in times.items()
    }


class Build(NamedTuple):
    """Another build's `self`, run on a store of its own."""

    executable: str
    env: dict[str, str]


def other_build(self_path: Path, root: Path, tmp: Path) -> Build:
    """The build of `self_path` (its bytecode compiled), on a copy of the store at `root`."""
    if not self_path.is_file():
        raise SystemExit(f"--before {self_path}: no such file; give the `self` of another build's venv")
    python = str(self_path.with_name("python"))
    where = subprocess.run([python, "-c", PACKAGE], check=True, capture_output=True, text=True)
    for part in ("service", "cli"):
        subprocess.run(
            [python, "-m", "compileall", "-q", os.path.join(where.stdout.strip(), part)], check=True
        )
    copy = tmp / "store-before"
    shutil.copytree(root, copy, symlinks=True)
    shutil.rmtree(copy / ".local" / "cache", ignore_errors=True)
    return Build(str(self_path), {**ENV, "SELF_WORKSPACE": str(copy), "SELF_PROJECT": "bench"})


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=21, help="runs of each process (default 21)")
    parser.add_argument("--events", type=int, default=10_000, help="events in the store (default 10000)")
    parser.add_argument("--store", type=Path, help="keep the store here and reuse it")
    parser.add_argument("--before", type=Path, help="another build's `self`, timed beside this one")
    args = parser.parse_args()
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.2f}")
    compile_package()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.store or Path(tmp) / "store"
        if not root.exists():
            build(root, "bench", args.events).close()
        before = None if args.before is None else other_build(args.before, root, Path(tmp))
        env = {**ENV, "SELF_WORKSPACE": str(root), "SELF_PROJECT": "bench"}
        found = medians(env, args.runs, before)
    base = found["python -c pass"]
    print(f"medians of {args.runs} runs; a store of {args.events:,} events; ratio to `python -c pass`")
    print(f"{'':>24} {'wall':>16}   {'cpu':>16}")
    print(f"{'python -c pass':>24} {_figure(base, base)}")
    for name, _, _ in COMMANDS:
        builds = ["self", "before", "typer"] if before is not None else ["self", "typer"]
        for build_name in builds:
            print(f"{build_name + ' ' + name:>24} {_figure(found[f'{build_name} {name}'], base)}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def _figure(seconds: tuple[float, float], base: tuple[float, float]) -> str:
    """Wall and CPU milliseconds, each with its ratio to the base's."""
    return "   ".join(f"{s * 1000:7.1f} ms {s / b:5.2f}x" for s, b in zip(seconds, base, strict=True))


if __name__ == "__main__":
    main()
