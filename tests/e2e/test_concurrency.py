"""Two writers at once: every record lands exactly once and the log stays in id order."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections import Counter

import pytest

from tests.support.selfrun import SELF, Store

pytestmark = pytest.mark.process  # real `self` processes: signals, locks, contention

PER_WRITER = 30
LOOP = """
import subprocess, sys
exe, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(count):
    proc = subprocess.run([exe, "state", "add", f"{tag} record {i}", "--label", "load"],
                          capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"{tag} record {i}: exit {proc.returncode}: {proc.stderr}")
"""


@pytest.mark.slow
def test_two_writers_add_every_record_once_in_id_order(store: Store) -> None:
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", LOOP, SELF, tag, str(PER_WRITER)],
            env=store.env(),
            cwd=store.cwd,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("left", "right")
    ]
    failures = []
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        if writer.returncode:
            failures.append(err)
    assert not failures, "\n".join(failures)

    texts = Counter(row["text"] for row in store.rows("--all") if "load" in row["labels"])
    expected = {f"{tag} record {i}" for tag in ("left", "right") for i in range(PER_WRITER)}
    assert set(texts) == expected, sorted(set(texts) ^ expected)
    assert all(n == 1 for n in texts.values()), [t for t, n in texts.items() if n > 1]

    segments = sorted((store.root / "projects" / "app" / "log").glob("*.jsonl"))
    ids = [json.loads(line)["id"] for seg in segments for line in seg.read_text().splitlines()]
    assert len(ids) == 2 * PER_WRITER
    disorder = [(a, b) for a, b in itertools.pairwise(ids) if a >= b]
    assert not disorder, f"segment lines are not strictly increasing by id: {disorder[:3]}"
