"""The single render gate for rows: how one entity looks at each exposure, and what it costs.

Every projection (context, status, lists, caps) renders an entity through these functions,
so the row an agent reads and the tokens the retention caps count are the same string.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from itertools import chain, pairwise

from service.core.events.events import Exposure
from service.core.fold.state import Entity
from service.core.projections import tokens

INDEX_WIDTH = 160
SHORT_MINIMUM = 8
_ELLIPSIS = "…"


def label_of(e: Entity) -> str:
    """The entity's first label, or "-" when it has none."""
    return e.labels[0] if e.labels else "-"


def one_line(text: str, width: int = INDEX_WIDTH) -> str:
    """`text` with whitespace runs collapsed, cut to `width` characters with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    return flat[: width - 1].rstrip() + _ELLIPSIS


def full_row(e: Entity) -> str:
    """The full-exposure row: label and whole text; continuation lines stay in the item."""
    text = "\n  ".join(line.rstrip() for line in e.text.strip().splitlines()) or "-"
    target = f" (target {e.target})" if e.target else ""
    return f"- [{label_of(e)}] {text}{target}"


def index_row(e: Entity) -> str:
    """The index-exposure row: one line of text, with the why after a dash when there is one."""
    body = f"{e.text} — {e.why}" if e.why and e.why.strip() else e.text
    return f"- [{label_of(e)}] {one_line(body)}"


def row(e: Entity, exposure: Exposure) -> str:
    """The row `e` renders as at `exposure`; empty at search exposure (it is absent)."""
    if exposure == "full":
        return full_row(e)
    if exposure == "index":
        return index_row(e)
    return ""


def cost(e: Entity, exposure: Exposure, per_char: float) -> int:
    """Context tokens `e` costs at `exposure`: the estimate of the row it renders (0 for search)."""
    return tokens.estimate(row(e, exposure), per_char)


def short_ids(ids: Iterable[str], minimum: int = SHORT_MINIMUM) -> dict[str, str]:
    """Each id's shortest unique prefix, at least `minimum` long; shorter ids stay whole.

    Sorted neighbours decide it: an id needs one character more than the longest prefix it
    shares with the id before or after it. The shared prefix of two neighbours is read off
    the XOR of their bytes as big integers, so 200,000 ids take one sort and a few C-level
    passes. An id that is a prefix of another id is shown whole (input resolves it exactly).
    """
    ordered = sorted(set(ids))
    if not ordered:
        return {}
    width = max(map(len, ordered))
    values = [int.from_bytes(i.encode().ljust(width, b"\0"), "big") for i in ordered]
    bits = 8 * width + 8  # (bits - bit_length(a ^ b)) >> 3 = shared bytes + 1
    need = [(bits - (a ^ b).bit_length()) >> 3 for a, b in pairwise(values)]
    need = [n if n > minimum else minimum for n in need]
    before = [minimum, *need]
    need.append(minimum)
    return {i: i[: b if b > a else a] for i, b, a in zip(ordered, before, need, strict=True)}


def shorts_for(
    wanted: Iterable[str], universe: Iterable[str], minimum: int = SHORT_MINIMUM
) -> dict[str, str]:
    """Short ids of `wanted` only, unique among `universe`, without sorting all of it.

    Only ids sharing a wanted id's first `minimum` characters can lengthen its prefix, so
    one pass keeps those and `short_ids` runs on that small set.
    """
    chosen = set(wanted)
    heads = {w[:minimum] for w in chosen}
    near = [u for u in universe if u[:minimum] in heads]
    found = short_ids([*near, *chosen], minimum)
    return {w: found[w] for w in chosen}


Near = Callable[[Collection[str]], Iterable[str]]
"""Given some ids, the ids of a universe that sort right before and after each of them."""


class LazyShorts(Mapping[str, str]):
    """`shorts_for(wanted, [*universe, *near(wanted)])`, each short id made when first read.

    An id's short is decided by its neighbours among the ids sharing its first `minimum`
    characters: the universe's, the wanted ones, and those `near` finds right around it (an
    id `near` finds around another wanted id cannot sort between this one and its own), so
    reading a few shorts costs a few lookups, not a sort of every id.
    """

    def __init__(
        self,
        wanted: Collection[str],
        universe: Iterable[str],
        near: Near | None = None,
        minimum: int = SHORT_MINIMUM,
    ) -> None:
        self._wanted = set(wanted)
        self._universe = universe
        self._near = near
        self._minimum = minimum
        self._heads: dict[str, str | list[str]] | None = None
        self._made: dict[str, str] = {}

    def __getitem__(self, key: str) -> str:
        if key not in self._wanted:
            raise KeyError(key)
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = self._short(key)
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self._wanted)

    def __len__(self) -> int:
        return len(self._wanted)

    def want(self, key: str) -> None:
        """Make a short id for `key` too: a record `near` finds the neighbours of."""
        self._wanted.add(key)

    def _short(self, wanted: str) -> str:
        head = wanted[: self._minimum]
        around = [u for u in self._near([wanted]) if u[: self._minimum] == head] if self._near else []
        same = self._index().get(head, ())
        among = [same] if isinstance(same, str) else same
        return short_ids([*among, *around, wanted], self._minimum)[wanted]

    def _index(self) -> dict[str, str | list[str]]:
        """The universe's and the wanted ids by their first `minimum` characters (an id alone
        under its head as a string: a list for each id would wake the garbage collector)."""
        if self._heads is None:
            heads: dict[str, str | list[str]] = {}
            universe = list(self._universe)
            for u in chain(universe, self._wanted.difference(universe)):
                head = u[: self._minimum]
                found = heads.get(head)
                if found is None:
                    heads[head] = u
                elif isinstance(found, str):
                    heads[head] = [found, u]
                else:
                    found.append(u)
            self._heads = heads
        return self._heads


def neighbours(ordered: Sequence[str]) -> Near:
    """The `Near` of a sorted sequence of ids."""

    def near(wanted: Collection[str]) -> list[str]:
        found: list[str] = []
        for w in wanted:
            at = bisect.bisect_left(ordered, w)
            found += ordered[max(at - 1, 0) : at + 2]
        return found

    return near


def pointer(text: str, command: str) -> str:
    """A recovery pointer: what was left out, and the command that shows it."""
    return f"- {text}; run `{command}`"


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """`1 entity`, `2 entities`: a count with its noun."""
    noun = singular if count == 1 else plural_form or f"{singular}s"
    return f"{count} {noun}"
