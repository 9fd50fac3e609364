"""The leading segments of a log that a sync need not read again.

A sync re-lays a log from its first segment that differs between the local store and the
remote; the full segments before it — the same blob on both sides, 1,000 whole lines — are
left as they are, but two things about them were read every time: that they are full, and
(to rule out a local-only event already among them) their ids. A blob id names its bytes, so
what was once learned of a blob holds for good: whether it is full, and the least and the
greatest id it holds. `.local/sync/segments.json` keeps that, so a one-event sync reads no
shared segment, and reads one only when a local-only id falls within its id range.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from pathlib import Path

import msgspec
from dulwich.objects import ObjectID

from service.adapters.store import layout
from service.adapters.sync import logs

MEMO = Path("sync") / "segments.json"  # under the store's .local/


class Span(msgspec.Struct, array_like=True, frozen=True):
    """The least and the greatest id of a full segment ("", "" when it holds none)."""

    low: str
    high: str

    def meets(self, ordered: list[str]) -> bool:
        """Does any of the sorted ids fall within the span?"""
        at = bisect.bisect_left(ordered, self.low)
        return at < len(ordered) and ordered[at] <= self.high


class Prefix:
    """The shared full segments of one log, in order, with their id spans."""

    def __init__(self, root: Path, paths: list[str], spans: list[Span]) -> None:
        self.root = root
        self.paths = paths
        self.spans = spans

    def __len__(self) -> int:
        return len(self.paths)

    def ids_among(self, wanted: set[str]) -> set[str]:
        """Those of `wanted` the shared segments hold: only a segment whose span could is read."""
        found: set[str] = set()
        ordered = sorted(wanted)
        for path, span in zip(self.paths, self.spans, strict=True):
            if span.meets(ordered):
                found |= wanted & logs.id_set(logs.lines_of((self.root / path).read_bytes()))
        return found


def shared_segments(
    root: Path,
    local_dir: Path,
    r_paths: list[str],
    l_paths: list[str],
    remote_files: dict[str, ObjectID],
    on_disk: dict[str, ObjectID],
) -> Prefix:
    """The leading segments that are the same blob on both sides and full, so the layout after
    them does not depend on them. The remote's last segment is never among them."""
    memo = load(local_dir)
    learned: dict[str, Span] = {}
    paths: list[str] = []
    spans: list[Span] = []
    for n, path in enumerate(r_paths[:-1]):
        blob = remote_files[path]
        if n >= len(l_paths) or l_paths[n] != path or on_disk.get(path) != blob:
            break
        key = blob.decode("ascii")
        span = memo.get(key)
        if span is None:
            span = span_of((root / path).read_bytes())
            if span is None:
                break  # a segment laid out by something else: the log is re-laid from here
            learned[key] = span
        paths.append(path)
        spans.append(span)
    if learned:
        memo.update(learned)
        _save(local_dir, memo)
    return Prefix(root, paths, spans)


def span_of(content: bytes, ids: set[str] | None = None) -> Span | None:
    """A full segment's span; None when the bytes are not 1,000 whole lines."""
    if content.count(b"\n") != layout.SEGMENT_EVENTS or not content.endswith(b"\n"):
        return None
    found = logs.id_set(logs.lines_of(content)) if ids is None else ids
    return Span(min(found), max(found)) if found else Span("", "")


def learn(root: Path, local_dir: Path, files: dict[str, ObjectID], on_disk: dict[str, ObjectID]) -> None:
    """Record the spans of the full segments among `files` (paths → blob ids) whose working
    file is that blob."""
    spans = {}
    for path, blob in files.items():
        if layout.log_of_path(path) is not None and on_disk.get(path) == blob:
            span = span_of((root / path).read_bytes())
            if span is not None:
                spans[blob.decode("ascii")] = span
    remember(local_dir, spans.items())


def load(local_dir: Path) -> dict[str, Span]:
    try:
        return msgspec.json.decode((local_dir / MEMO).read_bytes(), type=dict[str, Span])
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return {}  # a cache: rebuilt from the segments


def remember(local_dir: Path, spans: Iterable[tuple[str, Span]]) -> None:
    """Add what was learned of some blobs (the caller holds the store lock)."""
    memo = load(local_dir)
    memo.update(spans)
    _save(local_dir, memo)


def _save(local_dir: Path, memo: dict[str, Span]) -> None:
    layout.atomic_write(local_dir / MEMO, msgspec.json.encode(memo), durable=False)
