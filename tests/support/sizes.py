"""A property test in two sizes: a few examples in the fast suite (`pytest -m "not slow"`),
the full count marked slow. The whole suite runs both, so it checks all it did before.

    def _property() -> Callable[..., None]:
        @given(...)
        @example(...)
        def test_it(...) -> None: ...
        return test_it

    _SIZES = two_sizes(_property, few=40, many=400, deadline=None)
    test_it_in_few_examples = _SIZES[0]
    test_it = _SIZES[1]

`build` makes a new @given test each time it is called (hypothesis lets a test take one
settings object), and both share the examples and the inner function, so what the
hypothesis database remembers of one is replayed by the other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import settings


def two_sizes(
    build: Callable[[], Callable[..., None]], *, few: int, many: int, **options: Any
) -> tuple[Callable[..., None], Callable[..., None]]:
    """(the test in `few` examples, the test in `many` examples marked slow)."""
    assert few < many, (few, many)
    fast = settings(max_examples=few, **options)(build())
    full = settings(max_examples=many, **options)(build())
    return fast, pytest.mark.slow(full)
