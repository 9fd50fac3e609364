"""ULIDs from a hybrid logical clock, and id prefixes.

An id is 26 lowercase Crockford base32 characters: 10 for milliseconds since the epoch,
16 for 80 bits of randomness. `next_id` returns an id greater than every id already seen
whose time part is at least the wall clock, so id order respects causality.

Ids are unique per writer whatever the clocks do. When the wall clock is behind the
greatest id seen, the new id keeps that id's time part and adds a fresh random step
(1 to 2**48) to its random part — never plain `last + 1`, which every replica that saw the
same id would mint alike. Two writers starting from one id then diverge unless their 48-bit
steps collide. A random part that would overflow moves to the next millisecond with fresh
randomness. An id whose time part is more than HORIZON_MS ahead of the wall clock is not
believed (`beyond_horizon`): sync refuses it, and the clock never moves to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from service.core.errors import Invalid

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_VALUE = {c: i for i, c in enumerate(ALPHABET)}
ID_LENGTH = 26
MAX_ID_VALUE = (1 << 130) - 1
RANDOM_BITS = 80
RANDOM_MASK = (1 << RANDOM_BITS) - 1
MAX_TIME = MAX_ID_VALUE >> RANDOM_BITS
STEP_BITS = 48  # a step behind the clock is 1 to 2**48: ~2**31 steps before the random part runs out
HORIZON_MS = 24 * 3600 * 1000  # how far ahead of the wall clock an id from elsewhere may be
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
    return decode(text) >> RANDOM_BITS


def next_id(last_seen: str | None, now_ms: int, random80: int) -> str:
    """The next id after `last_seen` at wall time `now_ms`, `random80` a fresh random draw.

    When the wall clock is ahead of everything seen, the id is fresh (time + randomness);
    otherwise it is `last_seen` with a random step added to its random part (the next
    millisecond when that part would overflow), so ids keep rising under clock skew and
    two writers that saw the same last id still mint different ones.
    """
    random80 &= RANDOM_MASK
    fresh = ((now_ms & ((1 << 48) - 1)) << RANDOM_BITS) | random80
    if last_seen is None:
        return encode(fresh)
    last = decode(last_seen)
    if fresh > last:
        return encode(fresh)
    stepped = (last & RANDOM_MASK) + 1 + (random80 & ((1 << STEP_BITS) - 1))
    if stepped <= RANDOM_MASK:
        return encode((last & ~RANDOM_MASK) | stepped)
    following = (last >> RANDOM_BITS) + 1
    if following > MAX_TIME:
        raise Invalid("the id space is exhausted")
    return encode((following << RANDOM_BITS) | random80)


def beyond_horizon(text: str, now_ms: int) -> bool:
    """Is the id's time part more than HORIZON_MS ahead of the wall clock `now_ms`?"""
    return time_ms(text) > now_ms + HORIZON_MS


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
        raise Invalid(f"{prefix!r} is not an id or id prefix", field="record")
    matches = [k for k in known if k.startswith(prefix)]
    if prefix in matches:
        return prefix
    if not matches:
        raise Invalid(f"no {what} has an id starting with {prefix!r}", code="not-found", field="record")
    if len(matches) > 1:
        shown = ", ".join(sorted(matches)[:5])
        raise Invalid(
            f"{prefix!r} is ambiguous: it starts {len(matches)} ids ({shown}); type more characters",
            code="ambiguous-prefix",
            field="record",
        )
    return matches[0]
