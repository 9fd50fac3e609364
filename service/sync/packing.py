"""The pack of a push: only what the remote lacks, each object as a delta against the remote's
object at the same path when that is smaller (a thin pack).

A one-event push changes one segment and the trees above it. Sent whole, the segment costs
what it holds (tens of kB for a full one); as a delta against the segment the remote already
has at that path, it costs the appended line. The same goes for each tree: one changed entry.

Honest bases only: a base is an object of the tree of the remote head just fetched, so the
remote holds it. No base is ever also in the pack (an object that is a base is one the remote
has, so it is left out), hence every delta is a REF_DELTA to an object outside the pack, which
git's receive-pack completes (`index-pack --fix-thin`, or `unpack-objects`).
"""

from __future__ import annotations

from collections.abc import Iterable

from dulwich.objects import Blob, ObjectID, ShaFile, Tree
from dulwich.pack import UnpackedObject, create_delta, full_unpacked_object
from dulwich.repo import Repo

from service.store import gitcommit

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
    delta = b"".join(create_delta(repo.object_store[base].as_raw_string(), raw))
    if len(delta) * 2 >= len(raw):
        return full_unpacked_object(obj)
    return UnpackedObject(
        obj.type_num,  # the pack writer makes it a REF_DELTA since its base is not in the pack
        delta_base=bytes.fromhex(base.decode("ascii")),
        decomp_chunks=[delta],
        sha=obj.sha().digest(),
    )
