"""Paths and globs relative to a checkout: whether two can name a common path, and whether
a path falls under one. Parallel validity, outcome tracking and ledger scopes read them."""

from __future__ import annotations

import fnmatch
import re

from service.core.errors import Invalid, slot

_WILD = re.compile(r"[*?\[]")


def overlap(a: str, b: str) -> bool:
    """Whether two paths or globs can name a common path (conservative for two globs: their
    literal heads must be compatible)."""
    if a == b:
        return True
    wild_a, wild_b = bool(_WILD.search(a)), bool(_WILD.search(b))
    if not wild_a and not wild_b:
        return (
            a.rstrip("/") == b.rstrip("/")
            or a.startswith(b.rstrip("/") + "/")
            or b.startswith(a.rstrip("/") + "/")
        )
    if not wild_b:
        return fnmatch.fnmatchcase(b, a) or _head(a).startswith(b.rstrip("/") + "/")
    if not wild_a:
        return overlap(b, a)
    head_a, head_b = _head(a), _head(b)
    return head_a.startswith(head_b) or head_b.startswith(head_a)


def _head(glob: str) -> str:
    match = _WILD.search(glob)
    return glob if match is None else glob[: match.start()]


def relative(path: str, field: str) -> str:
    """A declared path or glob, refused unless it is relative to the checkout."""
    if not path.strip() or path.startswith(("/", "~")):
        example = "give a path or glob relative to the checkout, e.g. src/app/*.py"
        raise Invalid(f"{slot(field)} {path!r}: {example}", field=field)
    return path


def matches(path: str, declared: str) -> bool:
    """A changed file falls under a declared path or glob (a directory covers its files)."""
    return fnmatch.fnmatchcase(path, declared) or path.startswith(declared.rstrip("/") + "/")
