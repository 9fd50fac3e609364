"""The pack of a push: only what the remote lacks, each object as a delta against the remote's
object at the same path when that is smaller (a thin pack).

A one-event push changes one segment and the trees above it. Sent whole, the segment costs
what it holds (tens of kB for a full one); as a delta against the segment the remote already
has at that path, it costs the appended line. The same goes for each tree: one changed entry.

Honest bases only: a base is an object of the tree of the remote head just fetched, so the
remote holds it. No base is ever also in the pack (an object that is a base is one the remote
has, so it is left out), hence every delta is a REF_DELTA to an object outside the pack, which
git's receive-pack completes (`index-pack --fix-thin`, or `unpack-objects`).

The delta is the bytes the two share at the start and at the end, copied, and the middle
inserted (`affix_delta`): exact for an append to a segment and for a tree with one changed
entry, linear in the object's size whatever dulwich's own delta search costs (pure Python
in some releases: seconds for a full segment).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.pack import UnpackedObject, full_unpacked_object
from dulwich.repo import Repo

from service.adapters.store import gitcommit
from service.adapters.sync import graph

Placed = tuple[ShaFile, "str | None"]  # an object and its path in the commit's tree (None: a commit)


class RemoteTree:
    """What the remote head's tree holds at a path: looked up lazily, one folder at a time."""

    def __init__(self, repo: Repo, root: ObjectID) -> None:
        self._repo = repo
        self._trees: dict[str, Tree | None] = {"": self._tree(root)}

    def _tree(self, sha: ObjectID) -> Tree | None:
        found = self._repo.object_store[sha]
        return found if isinstance(found, Tree) else None

    def folder(self, path: str) -> Tree | None:
        if path not in self._trees:
            parent, _, name = path.rpartition("/")
            above = self.folder(parent)
            entry = _entry(above, name) if above is not None else None
            self._trees[path] = (
                self._tree(entry[1]) if entry is not None and entry[0] == gitcommit.DIR_MODE else None
            )
        return self._trees[path]

    def at(self, path: str, kind: type[ShaFile]) -> ObjectID | None:
        """The id of the remote's object of type `kind` (Tree or Blob) at `path`, if any."""
        if kind is Tree:
            tree = self.folder(path)
            return tree.id if tree is not None else None
        parent, _, name = path.rpartition("/")
        above = self.folder(parent)
        entry = _entry(above, name) if above is not None else None
        return entry[1] if entry is not None and entry[0] != gitcommit.DIR_MODE else None


def _entry(tree: Tree, name: str) -> tuple[int, ObjectID] | None:
    try:
        mode, sha = tree[name.encode("utf-8")]
    except KeyError:
        return None
    return mode, sha


def thin_records(repo: Repo, objects: Iterable[Placed], remote_root: ObjectID) -> list[UnpackedObject]:
    """The pack records of `objects` for a remote whose head's tree is `remote_root`."""
    remote = RemoteTree(repo, remote_root)
    placed = list(objects)
    bases: dict[bytes, ObjectID | None] = {}
    for obj, path in placed:
        kind = type(obj)
        bases[obj.id] = remote.at(path, kind) if path is not None and kind in (Tree, Blob) else None
    held = {base for base in bases.values() if base is not None}
    records = []
    for obj, _ in placed:
        base = bases[obj.id]
        if obj.id in held or base == obj.id:
            continue  # the remote has it
        records.append(_record(repo, obj, base))
    return records


def _record(repo: Repo, obj: ShaFile, base: ObjectID | None) -> UnpackedObject:
    """`obj` as a delta against `base` when the delta is less than half its size, else whole."""
    if base is None:
        return full_unpacked_object(obj)
    raw = obj.as_raw_string()
    delta = affix_delta(repo.object_store[base].as_raw_string(), raw)
    if len(delta) * 2 >= len(raw):
        return full_unpacked_object(obj)
    return UnpackedObject(
        obj.type_num,  # the pack writer makes it a REF_DELTA since its base is not in the pack
        delta_base=bytes.fromhex(base.decode("ascii")),
        decomp_chunks=[delta],
        sha=obj.sha().digest(),
    )


# git's delta format: the two sizes, then instructions: copy (offset, size ≤ 64 KiB in a
# version 2 pack) from the base, or insert (1..127 literal bytes).
_COPY_MAX = 0xFFFF
_INSERT_MAX = 0x7F


def affix_delta(base: bytes, target: bytes) -> bytes:
    """A git delta turning `base` into `target`: their common prefix and suffix copied from
    `base`, the rest of `target` inserted."""
    head = _common_prefix(base, target)
    tail = _common_prefix(base[head:][::-1], target[head:][::-1])
    out = bytearray(_varint(len(base)) + _varint(len(target)))
    _copy(out, 0, head)
    middle = target[head : len(target) - tail]
    for start in range(0, len(middle), _INSERT_MAX):
        chunk = middle[start : start + _INSERT_MAX]
        out.append(len(chunk))
        out += chunk
    _copy(out, len(base) - tail, tail)
    return bytes(out)


def _common_prefix(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix, by bisection on slice comparisons (C speed)."""
    if b.startswith(a):
        return len(a)
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _copy(out: bytearray, offset: int, size: int) -> None:
    while size > 0:
        step = min(size, _COPY_MAX)
        op, args = 0x80, bytearray()
        for i in range(4):
            byte = (offset >> (8 * i)) & 0xFF
            if byte:
                op |= 1 << i
                args.append(byte)
        for i in range(2):
            byte = (step >> (8 * i)) & 0xFF
            if byte:
                op |= 1 << (4 + i)
                args.append(byte)
        out.append(op)
        out += args
        offset += step
        size -= step


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def push_pack(
    repo: Repo, commit_id: ObjectID, remote_head: ObjectID, thin: bool = True
) -> Callable[..., tuple[int, Iterator[object]]]:
    """Only what the remote lacks: each commit its head does not reach, with the trees and
    blobs that commit changes against its first parent (the rest the remote has, or another
    of those commits brings). `thin`: each tree and blob as a delta against the remote head's
    object at the same path where that is smaller (`packing.py`); else every object whole.

    (dulwich's own pack walk visits the whole history of the remote's head first.)
    """

    def generate(
        have: object, want: object, *, ofs_delta: bool = False, progress: object = None
    ) -> tuple[int, Iterator[object]]:
        objects: dict[bytes, Placed] = {}
        for commit in sorted(graph.only_in(repo, [commit_id], [remote_head])):
            found = repo[commit]
            assert isinstance(found, Commit)
            parent = found.parents[0] if found.parents else None
            for obj, path in new_objects(repo, commit, parent):
                objects.setdefault(obj.id, (obj, path))
        if not thin:
            return len(objects), iter([full_unpacked_object(o) for o, _ in objects.values()])
        remote = repo[remote_head]
        assert isinstance(remote, Commit)
        records = thin_records(repo, objects.values(), remote.tree)
        return len(records), iter(records)

    return generate


def new_objects(repo: Repo, commit_id: ObjectID, parent_id: ObjectID | None) -> list[Placed]:
    """The commit and the trees and blobs it changes against its parent, each with its path
    in the commit's tree ("" the root tree, None the commit)."""
    commit = repo[commit_id]
    assert isinstance(commit, Commit)
    old_tree: ObjectID | None = None
    if parent_id is not None:
        parent = repo[parent_id]
        assert isinstance(parent, Commit)
        old_tree = parent.tree
    out: dict[bytes, Placed] = {commit.id: (commit, None)}
    stack: list[tuple[ObjectID, ObjectID | None, str]] = [(commit.tree, old_tree, "")]
    while stack:
        new_id, old_id, where = stack.pop()
        if new_id == old_id or new_id in out:
            continue
        tree = repo[new_id]
        assert isinstance(tree, Tree)
        out[tree.id] = (tree, where)
        old_entries: dict[bytes, tuple[int, ObjectID]] = {}
        if old_id is not None:
            before_tree = repo[old_id]
            assert isinstance(before_tree, Tree)
            old_entries = {e.path: (e.mode, e.sha) for e in before_tree.iteritems()}
        for entry in tree.iteritems():
            before = old_entries.get(entry.path)
            if before is not None and before[1] == entry.sha:
                continue
            name = entry.path.decode("utf-8")
            path = f"{where}/{name}" if where else name
            if entry.mode == gitcommit.DIR_MODE:
                previous = before[1] if before is not None and before[0] == gitcommit.DIR_MODE else None
                stack.append((entry.sha, previous, path))
            elif entry.sha not in out:
                out[entry.sha] = (repo[entry.sha], path)
    return list(out.values())
