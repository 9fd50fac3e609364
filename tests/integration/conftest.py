"""Integration fixtures: the stores a test opened through sync_support (`new_store`,
`replica`, `track`) are closed when it ends, whatever it asserted."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.sync_support import close_all


@pytest.fixture(autouse=True)
def _close_stores() -> Iterator[None]:
    yield
    close_all()
