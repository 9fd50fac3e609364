"""ULIDs from a hybrid logical clock, and id prefixes.

An id is 26 lowercase Crockford base32 characters: 10 for milliseconds since the epoch,
16 for 80 bits of randomness. `next_id` returns an id greater than every id already seen
whose time part is at least the wall clock, so id order respects causality.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from service.model.errors import Invalid

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_VALUE = {c: i for i, c in enumerate(ALPHABET)}
ID_LENGTH = 26
MAX_ID_VALUE = (1 << 130) - 1
ID_PATTERN = re.compile(r"^[0-9a-hjkmnp-tv-z]{26}$")
PREFIX_PATTERN = re.compile(r"^[0-9a-z_-]+$")


def encode(value: int) -> str:
    """The 26-character form of a 130-bit integer."""
    chars = []
    for _ in range(ID_LENGTH):
        chars.append(ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def decode(text: str) -> int:
    """The integer an id stands for; raises Invalid for anything that is not an id."""
    if not ID_PATTERN.match(text):
        raise Invalid(f"{text!r} is not an id (26 lowercase Crockford base32 characters)")
    value = 0
    for char in text:
        value = (value << 5) | _VALUE[char]
    return value


def is_id(text: str) -> bool:
    return bool(ID_PATTERN.match(text))


def time_ms(text: str) -> int:
    """Milliseconds since the epoch carried by an id."""
    return decode(text) >> 80


def next_id(last_seen: str | None, now_ms: int, random80: int) -> str:
    """The next id after `last_seen` at wall time `now_ms`.

    When the wall clock is ahead of everything seen, the id is fresh (time + randomness);
    otherwise it is `last_seen + 1`, so ids stay strictly increasing under clock skew.
    """
    fresh = ((now_ms & ((1 << 48) - 1)) << 80) | (random80 & ((1 << 80) - 1))
    if last_seen is None:
        return encode(fresh)
    floor = decode(last_seen) + 1
    if floor > MAX_ID_VALUE:
        raise Invalid("the id space is exhausted")
    return encode(max(fresh, floor))


def short(entity_id: str, taken: Iterable[str], minimum: int = 8) -> str:
    """The shortest prefix of `entity_id` (at least `minimum` long) unique among `taken`."""
    others = [t for t in taken if t != entity_id]
    length = min(minimum, len(entity_id))
    while length < len(entity_id) and any(o.startswith(entity_id[:length]) for o in others):
        length += 1
    return entity_id[:length]


def resolve(prefix: str, known: Iterable[str], what: str = "record") -> str:
    """The one id in `known` that starts with `prefix`; Invalid when none or several do."""
    prefix = prefix.strip().lower()
    if not prefix or not PREFIX_PATTERN.match(prefix):
        raise Invalid(f"{prefix!r} is not an id or id prefix")
    matches = [k for k in known if k.startswith(prefix)]
    if prefix in matches:
        return prefix
    if not matches:
        raise Invalid(f"no {what} has an id starting with {prefix!r}; `self state list --all` lists ids")
    if len(matches) > 1:
        shown = ", ".join(sorted(matches)[:5])
        raise Invalid(
            f"{prefix!r} is ambiguous: it starts {len(matches)} ids ({shown}); type more characters"
        )
    return matches[0]
