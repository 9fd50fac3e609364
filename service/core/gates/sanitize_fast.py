"""A first pass of the sanitize gate over many lines of JSON at once (a segment's bytes).

`suspect_lines` finds, with a few scans of the bytes at C speed, the lines whose strings may
hold a fact `sanitize.value_fact` refuses; the strings of every other line provably pass it.
Keys are not judged here (`segment_gate` judges them with `sanitize`'s own key verdict). It
relies on two facts:

- in a line of printable ASCII without a backslash, every JSON string is exactly the bytes
  between a pair of quotes (no escapes), so a pattern that matches in a string matches in
  the line at the same place: the patterns' look-arounds refuse only letters, digits and a
  few punctuation marks next to a match, and a string's boundary in the line is a quote;
- every check of `value_fact` on printable text needs one of: `@`, `=`, `~`, `:/`, a PEM,
  bearer or authorization literal, a secret word followed by a colon (`_ASSIGN_COLON`), a
  `_POSIX_LOCAL` match, a run of TOKEN_WORD or more token characters (vendor tokens, long
  random runs), or a machine-local literal.

A line the pass cannot reason about (a byte that is not printable ASCII, a backslash, nesting
that may reach MAX_DEPTH) is a suspect too.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence

from service.core.gates import sanitize
from service.core.gates import secret_formats as formats

# printable ASCII but for the backslash and the rare characters some check needs
_COMMON = bytes(c for c in range(0x20, 0x7F) if c not in b"\\@=~") + b"\n"
_OPENERS = bytes(c for c in range(256) if c not in b"{[\n")
_LITERALS = (b":/", b"-----BEGIN", b"earer", b"uthorization")
# `_ASSIGN_COLON`: a secret word (a hint, then more letters or underscores), a quote maybe, a colon
_HINT_COLON = tuple(
    re.compile(re.escape(word.encode()) + rb"[a-z_]*['\"]?\s*:")
    for word in formats._SECRET_HINT.pattern.split("|")
)
_POSIX = re.compile(sanitize._POSIX_LOCAL.pattern.encode())
# Every vendor token (at least TOKEN_WORD long) and every long random run is a run of these:
# seen as `a` (lowercase letters and digits) and `S` (the others), the rest as spaces.
_LOWER = b"abcdefghijklmnopqrstuvwxyz0123456789"
_OTHER = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ_-.=+/"
_RUNS = bytes(b"a"[0] if c in _LOWER else b"S"[0] if c in _OTHER else b" "[0] for c in range(256))
_ONE = bytes.maketrans(b"S", b"a")
# A run of 26 lowercase letters and digits (an id) is no token (no `S`) and too short for a
# random run: blanked before the search, so the ids of every line cost no Python step.
_ID_RUN, _ID_BLANK = b" " + b"a" * 26 + b" ", b" " * 28
_LONG = b"a" * formats.TOKEN_WORD
_TOKENS = re.compile(formats._TOKENS.pattern.encode())
_RUN = re.compile(formats._RUN.pattern.encode())
_COMMIT_VALUE = tuple(b'"%s":"' % key.encode() for key in sanitize._COMMIT_KEYS)


def suspect_lines(blob: bytes, local: Sequence[str] = ()) -> set[int]:
    """The numbers (from 0) of the lines of `blob` whose strings `sanitize.value_fact` must
    still check; every string of every other line passes it (`local` as in `check_event`).
    `blob` holds JSON values, one a line, with no whitespace outside strings."""
    ends = [m.start() for m in re.finditer(b"\n", blob)]
    found: set[int] = set()

    def line_at(pos: int) -> int:
        return bisect_right(ends, pos - 1)

    for char in set(blob.translate(None, _COMMON)):
        _lines_with(blob, bytes([char]), line_at, ends, found)
    for literal in _LITERALS:
        _lines_with(blob, literal, line_at, ends, found)
    for fact in sanitize._usable(local):
        _lines_with(blob, fact.encode("utf-8", "replace"), line_at, ends, found)
    lowered = blob.lower()
    for hint in _HINT_COLON:
        for match in hint.finditer(lowered):
            found.add(line_at(match.start()))
    for match in _POSIX.finditer(blob):
        found.add(line_at(match.start()))
    for start, end in _long_runs(blob):
        run = blob[start:end]
        if len(run) >= 32 and _RUN.search(run):
            if not _commit_sha(blob, start, end):
                found.add(line_at(start))
        elif not (run.isalnum() and run.islower()) and _TOKENS.search(run):
            # (every vendor token holds an underscore, a dash, a dot or a capital)
            found.add(line_at(start))
    for number, openers in enumerate(blob.translate(None, _OPENERS).split(b"\n")):
        if len(openers) >= sanitize.MAX_DEPTH:
            found.add(number)
    return found


def _long_runs(blob: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of every run of token characters in `blob` of TOKEN_WORD or more, but
    for runs of exactly 26 lowercase letters and digits."""
    view = blob.translate(_RUNS).replace(_ID_RUN, _ID_BLANK).translate(_ONE)
    start = view.find(_LONG)
    while start >= 0:
        end = view.find(b" ", start)
        end = len(view) if end < 0 else end
        yield start, end
        start = view.find(_LONG, end)


def _commit_sha(blob: bytes, start: int, end: int) -> bool:
    """Whether blob[start:end] is a whole string, a full commit sha, under a commit key (the
    gate lets it through whatever it looks like)."""
    return (
        blob[end : end + 1] == b'"'
        and any(blob.endswith(key, 0, start) for key in _COMMIT_VALUE)
        and sanitize._SHA.fullmatch(blob[start:end].decode("ascii")) is not None
    )


def _end(ends: list[int], number: int, blob: bytes) -> int:
    return ends[number] if number < len(ends) else len(blob)


def _lines_with(
    blob: bytes, literal: bytes, line_at: Callable[[int], int], ends: list[int], found: set[int]
) -> None:
    """Add to `found` every line of `blob` that holds `literal`."""
    pos = blob.find(literal)
    while pos >= 0:
        number = line_at(pos)
        found.add(number)
        pos = blob.find(literal, _end(ends, number, blob))
