"""A JSON document's text brought to a new value, changing only the text of what changed.

An agent's settings file is the user's: its layout, key order and spacing stay as they are.
`rewrite` parses the text into spans, compares the old value with the new one and edits only
the members and items that were added, removed or changed, in the layout around them. So a
member added and then removed again leaves the text byte for byte as it was.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence

import msgspec

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_ALIGN_LIMIT = 12  # items past which an array's removals are matched greedily


class _Node(msgspec.Struct):
    """A value's span; for a container its children: (key or None, start of the child's text, node)."""

    start: int
    end: int
    children: list[tuple[str | None, int, _Node]] = msgspec.field(default_factory=list)
    container: bool = False


def rewrite(text: str, new: object) -> str:
    """`text` (a JSON document) holding `new`, with the layout of everything unchanged kept."""
    if not text.strip():
        return json.dumps(new, indent=2, ensure_ascii=False) + "\n"
    old = json.loads(text)
    if old == new:
        return text
    try:
        tree = _parse(text, _WS.match(text, 0).end())  # type: ignore[union-attr]
    except (ValueError, IndexError):
        return json.dumps(new, indent=2, ensure_ascii=False) + "\n"
    edits: list[tuple[int, int, str]] = []
    _Differ(text, _unit(text), edits).value(tree, old, new)
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _parse(text: str, i: int) -> _Node:
    if text[i] not in "{[":
        _, end = _DECODER.raw_decode(text, i)
        return _Node(i, end)
    close = "}" if text[i] == "{" else "]"
    node = _Node(i, i, container=True)
    i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
    while text[i] != close:
        start, key = i, None
        if close == "}":
            key, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
            i = _WS.match(text, i).end() + 1  # type: ignore[union-attr]  # past the colon
            i = _WS.match(text, i).end()  # type: ignore[union-attr]
        child = _parse(text, i)
        node.children.append((key, start, child))
        i = _WS.match(text, child.end).end()  # type: ignore[union-attr]
        if text[i] == ",":
            i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
    node.end = i + 1
    return node


def _unit(text: str) -> str:
    """The document's indentation step (two spaces when it has none)."""
    found = re.search(r"\n([ \t]+)\S", text)
    return found[1] if found else "  "


class _Differ:
    def __init__(self, text: str, unit: str, edits: list[tuple[int, int, str]]) -> None:
        self.text, self.unit, self.edits = text, unit, edits

    def value(self, node: _Node, old: object, new: object) -> None:
        if old == new:
            return
        if node.container and isinstance(old, dict) and isinstance(new, dict):
            self._object(node, old, new)
        elif node.container and isinstance(old, list) and isinstance(new, list):
            self._array(node, old, new)
        else:
            self._replace(node, new)

    def _object(self, node: _Node, old: dict[str, object], new: dict[str, object]) -> None:
        gone = [n for n, (key, _, _) in enumerate(node.children) if key not in new]
        added = [(k, v) for k, v in new.items() if k not in old]
        if (gone and added) or len({k for k, _, _ in node.children}) != len(node.children):
            return self._replace(node, new)
        for key, _, child in node.children:
            if key in new:
                self.value(child, old[key or ""], new[key or ""])
        self._remove(node, gone)
        self._insert(node, added)

    def _array(self, node: _Node, old: list[object], new: list[object]) -> None:
        if len(new) >= len(old):
            for (_, _, child), before, after in zip(node.children, old, new, strict=False):
                self.value(child, before, after)
            return self._insert(node, [(None, v) for v in new[len(old) :]])
        gone = _removed(old, new)
        kept = [n for n in range(len(old)) if n not in gone]
        for n, after in zip(kept, new, strict=True):
            self.value(node.children[n][2], old[n], after)
        self._remove(node, sorted(gone))

    def _replace(self, node: _Node, new: object) -> None:
        self.edits.append((node.start, node.end, self._render(new, self._indent(node.start))))

    def _remove(self, node: _Node, gone: list[int]) -> None:
        """Cut the children `gone`, each with the separator that joined it to the others."""
        if not gone:
            return
        children = node.children
        if len(gone) == len(children):
            self.edits.append((node.start + 1, node.end - 1, ""))
            return
        for first, last in _runs(gone):
            if first == 0:
                self.edits.append((children[0][1], children[last + 1][1], ""))
            else:
                self.edits.append((children[first - 1][2].end, children[last][2].end, ""))

    def _insert(self, node: _Node, items: Sequence[tuple[str | None, object]]) -> None:
        """Add `items` after the last child, laid out as the container's children are."""
        if not items:
            return
        children = node.children
        inner = self.text[node.start + 1 : children[0][1]] if children else ""
        multiline = "\n" in inner or not children
        indent = inner.rpartition("\n")[2] if children else self._indent(node.start) + self.unit
        texts = [
            ("" if k is None else json.dumps(k, ensure_ascii=False) + ": ")
            + self._render(v, indent if multiline else None)
            for k, v in items
        ]
        if children:
            between = (
                self.text[children[-2][2].end : children[-1][1]]
                if len(children) > 1
                else ("," + inner if multiline else ", ")
            )
            self.edits.append((children[-1][2].end, children[-1][2].end, "".join(between + t for t in texts)))
        else:
            outer = self._indent(node.start)
            body = ("," + "\n" + indent).join(texts)
            self.edits.append((node.start + 1, node.end - 1, f"\n{indent}{body}\n{outer}"))

    def _indent(self, at: int) -> str:
        line = self.text[self.text.rfind("\n", 0, at) + 1 : at]
        return line[: len(line) - len(line.lstrip(" \t"))]

    def _render(self, value: object, indent: str | None) -> str:
        if indent is None:
            return json.dumps(value, ensure_ascii=False)
        return json.dumps(value, indent=self.unit, ensure_ascii=False).replace("\n", "\n" + indent)


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """Sorted indices as runs of consecutive ones: (first, last) each."""
    runs: list[tuple[int, int]] = []
    for n in indices:
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def _removed(old: list[object], new: list[object]) -> set[int]:
    """Which items of `old` were taken out to leave `new` (the others changed at most):
    the choice that keeps the most items equal."""
    count = len(old) - len(new)
    if len(old) > _ALIGN_LIMIT:
        gone: set[int] = set()
        j = 0
        for n, item in enumerate(old):
            if (j < len(new) and item == new[j]) or len(gone) == count:
                j += 1
            else:
                gone.add(n)
        return gone
    best: tuple[int, tuple[int, ...]] = (-1, ())
    for chosen in itertools.combinations(range(len(old)), count):
        kept = [item for n, item in enumerate(old) if n not in chosen]
        score = sum(a == b for a, b in zip(kept, new, strict=True))
        if score > best[0]:
            best = (score, chosen)
    return set(best[1])
