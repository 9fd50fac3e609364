"""Token estimates: characters times one measured number (`tokens_per_char`); text cut to a
budget, and the most of something that fits one."""

from __future__ import annotations

import math
from collections.abc import Callable

ELLIPSIS = "…"
ESTIMATE_NOTE = "token counts are estimates (characters × tokens_per_char; see `self tokens`)"


def estimate(text: str, per_char: float) -> int:
    """Tokens `text` costs in context; never less than one for non-empty text."""
    return of_length(len(text), per_char)


def of_length(length: int, per_char: float) -> int:
    """Tokens a text of `length` characters costs (`estimate`)."""
    if not length:
        return 0
    return max(1, math.ceil(length * per_char))


def within(text: str, budget: int, rate: float) -> str:
    """`text`, or when it is over the budget, as much of it as fits with an ellipsis."""
    if estimate(text, rate) <= budget:
        return text
    room = max(0, int(budget / rate) - len(ELLIPSIS) - 1)
    while room and estimate(text[:room] + ELLIPSIS + "\n", rate) > budget:
        room -= 1
    return text[:room].rstrip() + ELLIPSIS + "\n"


def most_that_fit(fits: Callable[[int], bool], upper: int) -> int:
    """The largest count in [0, upper] that fits, given that 0 fits (binary search)."""
    low, high = 0, upper
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid) else (low, mid - 1)
    return low
