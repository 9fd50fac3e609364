"""The kept data directory of format 0 (tests/fixtures/data-format0.tar.gz), made by the release
before formats were written: workspace acme with project web (a goal and a decision by the
CLI, a goal over HTTP), user ann with a writer token, the search index and arrival journal a
service made. The upgrade tests migrate it."""

from __future__ import annotations

import tarfile
from pathlib import Path

from tests.support.selfrun import REPO

FIXTURE = REPO / "tests" / "fixtures" / "data-format0.tar.gz"


def fixture_data(folder: Path) -> Path:
    """The kept data directory unpacked in `folder`; its path (`folder/data`)."""
    with tarfile.open(FIXTURE) as tar:
        tar.extractall(folder, filter="data")
    return folder / "data"
