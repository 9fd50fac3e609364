"""The team service's search index: a first refresh, one appended record, and searches.

Usage: python bench/search_index.py [RECORDS...]   (default 20000)
Each size gets a data directory with one workspace whose project holds RECORDS records of
twelve words drawn from 2,000; prints the time of each step on this machine.
"""

from __future__ import annotations

import platform
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.adapters.data.workspaces import Data
from service.adapters.index import SearchIndex
from service.adapters.store import layout
from service.core.events.events import canonical
from tests.support.builders import Log

WORDS = [f"w{i}" for i in range(2000)] + ["deploy", "index", "search", "sync"]
QUERIES = ["deploy", "deploy sync", "w1", "w", "nothing-like-this"]


def seconds(start: float) -> str:
    return f"{time.perf_counter() - start:.3f} s"


def run(records: int) -> None:
    rng = random.Random(records)
    log = Log("app")
    for _ in range(records + 1):
        log.entity(" ".join(rng.choice(WORDS) for _ in range(12)), "note")
    with tempfile.TemporaryDirectory() as tmp:
        data = Data(Path(tmp) / "data")
        data.add("team").close()
        folder = data.path("team") / layout.log_dir("app")
        folder.mkdir(parents=True)
        events, last = log.events[:-1], log.events[-1]
        for k in range(0, len(events), layout.SEGMENT_EVENTS):
            lines = b"".join(canonical(e) for e in events[k : k + layout.SEGMENT_EVENTS])
            (folder / layout.segment_name(k // layout.SEGMENT_EVENTS)).write_bytes(lines)
        with SearchIndex(data) as index:
            start = time.perf_counter()
            index.refresh()
            print(f"{records} records: first refresh {seconds(start)}")
            segment = folder / layout.segments(data.path("team"), "app")[-1]
            with segment.open("ab") as handle:
                handle.write(canonical(last))
            start = time.perf_counter()
            done = index.refresh()
            how = "advanced" if done.advanced else "rebuilt"
            print(f"  one record appended: refresh {seconds(start)} ({how})")
            for q in QUERIES:
                start = time.perf_counter()
                hits = index.search(q, "app", ["team"], 20)
                print(f"  search {q!r}: {len(hits)} hits, {seconds(start)}")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("records", nargs="*", type=int, default=[20000])
    given = parser.parse_args()
    print(platform.platform(), platform.python_version())
    for size in given.records:
        run(size)
