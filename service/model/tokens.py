"""Token estimates: characters times one measured number (`tokens_per_char`)."""

from __future__ import annotations

import math

ESTIMATE_NOTE = "token counts are estimates (characters × tokens_per_char; see `self tokens`)"


def estimate(text: str, per_char: float) -> int:
    """Tokens `text` costs in context; never less than one for non-empty text."""
    if not text:
        return 0
    return max(1, math.ceil(len(text) * per_char))
