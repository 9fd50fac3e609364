"""The agent's hot path: what a coding agent's hooks pay on every tool call and session start.

Usage: python bench/agent.py [--runs N] [--events N] [--store DIR]

Medians of N runs of each process, in one run, each with its ratio to `python -c pass`:
`self --version`, `self gate` (a pre-tool-use hook's JSON on stdin), `self agent context` and
`self context --plain` on a local store of 10,000 events (bench/generate.py), each beside the
same command through the typer app (`python -m cli.main`, the path every command took before
cli/fast.py answered these). The runs are interleaved (one of each command, N times), so a
load that comes and goes weighs on every command alike. The processes run with the
package's bytecode compiled, as an installed package has it. `--store DIR` keeps the
generated store there and reuses it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parent))

from core import ENV, compile_package, machine
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


def timed(args: list[str], env: dict[str, str], stdin: str | None) -> float:
    start = time.perf_counter()
    subprocess.run(args, env=env, input=stdin, text=True, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def medians(env: dict[str, str], runs: int) -> dict[str, float]:
    """Median seconds of each process, the runs interleaved."""
    Case = tuple[list[str], str | None]
    cases: dict[str, Case] = {"python -c pass": ([sys.executable, "-c", "pass"], None)}
    for name, args, stdin in COMMANDS:
        cases[f"self {name}"] = ([SELF, *args], stdin)
        cases[f"typer {name}"] = ([*TYPER, *args], stdin)
    for args, stdin in cases.values():  # warm the page cache and the store's caches
        timed(args, env, stdin)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, (args, stdin) in cases.items():
            times[name].append(timed(args, env, stdin))
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=21, help="runs of each process (default 21)")
    parser.add_argument("--events", type=int, default=10_000, help="events in the store (default 10000)")
    parser.add_argument("--store", type=Path, help="keep the store here and reuse it")
    args = parser.parse_args()
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.2f}")
    compile_package()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.store or Path(tmp) / "store"
        if not root.exists():
            build(root, "bench", args.events).close()
        env = {**ENV, "SELF_WORKSPACE": str(root), "SELF_PROJECT": "bench"}
        found = medians(env, args.runs)
    base = found["python -c pass"]
    print(f"medians of {args.runs} runs; a store of {args.events:,} events; ratio to `python -c pass`")
    print(f"{'python -c pass':>22} {base * 1000:7.1f} ms  1.00x")
    for name, _, _ in COMMANDS:
        fast, typer = found[f"self {name}"], found[f"typer {name}"]
        print(
            f"{'self ' + name:>22} {fast * 1000:7.1f} ms {fast / base:5.2f}x   "
            f"through typer {typer * 1000:7.1f} ms {typer / base:5.2f}x"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
