"""Work units' declared sets: parallel validity (read and write sets) and outcome tracking
(intended outcomes against the files a unit changed)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from service.core.commands import commands
from service.core.errors import Invalid
from service.core.events.events import LedgerFields
from service.core.fold.state import Entity, State
from service.core.gates.globs import matches, overlap, relative

MARKER = ".selfhub"  # the file `self project link` writes in a checkout, naming its project
OWN_FILES = frozenset({MARKER})  # selfhub's own files in a checkout: never a work outcome


def work_fields(
    label: str, reads: Sequence[str], writes: Sequence[str], intends: Sequence[str]
) -> LedgerFields | None:
    """A work unit's declared read, write and intended-outcome sets (None when none is given)."""
    if not (reads or writes or intends):
        return None
    if label != "work":
        raise Invalid(
            "{reads}, {writes} and {intends} belong to work units",
            code="wrong-kind",
            field=("reads", "writes", "intends"),
        )
    for field, paths in (("reads", reads), ("writes", writes), ("intends", intends)):
        for path in paths:
            relative(path, field)
    return LedgerFields(reads=tuple(reads), writes=tuple(writes), intends=tuple(intends))


def parallel(state: State, prefixes: Sequence[str]) -> dict[str, Any]:
    """Whether work units commute: no unit writes what another reads or writes.

    Certified only when every unit declared its sets; otherwise each conflicting pair is
    named with the paths and how they conflict (write/write or write/read).
    """
    if len(prefixes) < 2:
        raise Invalid("name two or more work units", code="missing-value", field="units")
    units = [commands.find(state, p, "units") for p in prefixes]
    if len({u.id for u in units}) != len(units):
        raise Invalid("a work unit is named twice", field="units")
    undeclared = [u.id for u in units if u.ledger is None or not (u.ledger.reads or u.ledger.writes)]
    conflicts: list[dict[str, str]] = []
    for i, a in enumerate(units):
        for b in units[i + 1 :]:
            conflicts += _conflicts(a, b)
    return {
        "units": [u.id for u in units],
        "commute": not conflicts and not undeclared,
        "conflicts": conflicts,
        "undeclared": undeclared,
    }


def _conflicts(a: Entity, b: Entity) -> list[dict[str, str]]:
    fa, fb = a.ledger or LedgerFields(), b.ledger or LedgerFields()
    found: list[dict[str, str]] = []
    for left, right, kind in (
        ((a.id, fa.writes), (b.id, fb.writes), "write/write"),
        ((a.id, fa.writes), (b.id, fb.reads), "write/read"),
        ((b.id, fb.writes), (a.id, fa.reads), "write/read"),
    ):
        for p in left[1]:
            for q in right[1]:
                if overlap(p, q):
                    found.append(
                        {"writer": left[0], "other": right[0], "path": p, "other_path": q, "kind": kind}
                    )
    return found


def outcome(realized: Iterable[str], intended: Sequence[str]) -> dict[str, list[str]]:
    """Intentional (R ∩ ι), unintentional (R \\ ι), and declared outcomes nothing realized;
    selfhub's own files (`OWN_FILES`, in any folder) are not outcomes."""
    changed = sorted({p for p in realized if p.rsplit("/", 1)[-1] not in OWN_FILES})
    intentional = [p for p in changed if any(matches(p, i) for i in intended)]
    return {
        "intended": list(intended),
        "realized": changed,
        "intentional": intentional,
        "unintentional": [p for p in changed if p not in intentional],
        "unrealized": [i for i in intended if not any(matches(p, i) for p in changed)],
    }
