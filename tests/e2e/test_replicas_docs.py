"""docs/replicas.md's "Two instances on one machine" run as written, on a real PostgreSQL
(tests/support/postgres.py) in place of the example's URL and on free ports: one token for
both instances, a write on A read on B by its commit, and a second write on A served by B a
second later without asking."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_docs import run_lines, sh_lines
from tests.support.postgres import postgres
from tests.support.selfrun import REPO
from tests.support.servers import free_port

GUIDE = REPO / "docs" / "replicas.md"
EXAMPLE_URL = "postgresql://selfhub@127.0.0.1:5432/selfhub"


@pytest.mark.slow
def test_two_instances_on_one_machine_runs_as_written(tmp_path: Path) -> None:
    lines = sh_lines(GUIDE, "Two instances on one machine")
    assert lines[0] == f"export SELF_IDENTITY={EXAMPLE_URL}"
    ports = {"8765": str(free_port()), "8766": str(free_port())}
    with postgres() as pg:
        given = [lines[0].replace(EXAMPLE_URL, pg.url)]
        for line in lines[1:]:
            for example, port in ports.items():
                line = line.replace(f"localhost:{example}", f"localhost:{port}").replace(
                    f" {example} ", f" {port} "
                )
            given.append(line)
        outputs = run_lines(tmp_path, given)
    reads = [i for i, line in enumerate(lines) if "8766/api/v1" in line]
    named, plain = reads
    assert "written on a" in outputs[named], outputs[named]
    assert "announced to b" in outputs[plain] and "written on a" in outputs[plain], outputs[plain]
