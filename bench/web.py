"""The web view's pages on a large project: time to answer and size of each.

Usage: python bench/web.py [--events N] [--rounds R]

Builds a data directory with one workspace whose project holds N events (default 100,000;
`bench/generate.py`'s mix), starts `self serve` on it, and asks each page R times (default 3)
with a reader's cookie, printing the median time to the whole answer and its size:
the project page, the records table (first page, and the second page of one label), and
one record's page (its history included). Run it from another checkout (with PYTHONPATH
set to it) to time that code's pages on the same kind of data. Prints the machine first.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
_spec = importlib.util.spec_from_file_location("service_bench", Path(__file__).with_name("service.py"))
assert _spec is not None and _spec.loader is not None
served = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(served)


def timed(client: httpx.Client, path: str, rounds: int) -> tuple[float, int]:
    """Median seconds to the whole answer of `path`, and its bytes."""
    times, size = [], 0
    for _ in range(rounds):
        start = time.perf_counter()
        answer = client.get(path)
        answer.raise_for_status()
        times.append(time.perf_counter() - start)
        size = len(answer.content)
    return statistics.median(times), size


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(served.machine())
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        data, reader, _ = served.make_data(tmp / "data", args.events)
        server = served.Server("uvicorn", data, tmp / "serve.log")
        try:
            with httpx.Client(base_url=server.url, timeout=600) as client:
                client.post("/signin", data={"token": reader}, follow_redirects=True).raise_for_status()
                base = f"/ws/{served.WS}/projects/{served.SLUG}"
                rows = client.get(
                    f"/api/v1/workspaces/{served.WS}/projects/{served.SLUG}/state",
                    headers={"Authorization": f"Bearer {reader}"},
                ).json()
                label = max(
                    {label for r in rows for label in r["labels"]},
                    key=lambda x: sum(x in r["labels"] for r in rows),
                )
                record = rows[len(rows) // 2]["id"]
                print(
                    f"project of {args.events:,} events: {len(rows):,} live records, most of them {label!r}"
                )
                pages = {
                    "project page": base,
                    "records table": f"{base}/records",
                    f"records table, label {label}, page 2": f"{base}/records?label={label}&page=2",
                    "one record, with its history": f"{base}/records/{record}",
                }
                for name, path in pages.items():
                    seconds, size = timed(client, path, args.rounds)
                    print(f"  {name}: {seconds:.2f} s, {size / 1024:,.0f} KiB (median of {args.rounds})")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
