"""What a store remembers of its syncs: the head each remote held after the last one
(`.local/sync/<remote>.json`, and `refs/remotes/<remote>/main`), the heads other remotes hold
(a sync never rewrites what one of them has), and the packs syncs leave, merged past
`MAX_PACKS`."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from dulwich.objects import ObjectID, ShaFile
from dulwich.refs import Ref
from dulwich.repo import Repo

from service.adapters.store import Store, gitcommit, layout
from service.adapters.sync import identity


def _record_path(store: Store, name: str) -> Path:
    return store.local_dir / "sync" / f"{name}.json"


def last_synced(store: Store, name: str) -> str | None:
    """The remote head the last successful sync with `name` left (kept in `.local/sync/`)."""
    try:
        data = json.loads(_record_path(store, name).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    head = data.get("head") if isinstance(data, dict) else None
    return head if isinstance(head, str) else None


def remember(store: Store, name: str, head: ObjectID) -> None:
    tidy_packs(store.repo)
    layout.atomic_write(_record_path(store, name), json.dumps({"head": head.decode()}).encode() + b"\n")
    identity.clear(store.local_dir, name)
    with contextlib.suppress(Exception):
        gitcommit.set_ref(store.repo, Ref(f"refs/remotes/{name}/main".encode()), head)
    if gitcommit.head(store.repo) == head:
        store.synced()


MAX_PACKS = 24


def tidy_packs(repo: Repo, most: int = MAX_PACKS) -> int:
    """Merge the smallest packs when there are more than `most`; returns how many were merged.

    Every fetch and push adds a small pack, and dulwich keeps every pack it looks into open
    (two file descriptors each): unmerged, a store that synced a thousand times runs out of
    descriptors. The smallest packs are merged into one, so the count stays bounded and the
    work per merge stays small (the big pack of a clone is left alone).
    """
    store = repo.object_store
    packs = sorted(store.packs, key=len)
    if len(packs) <= most:
        return 0
    merge = packs[: len(packs) - most // 2]
    objects: dict[bytes, ShaFile] = {}
    for pack in merge:
        for obj in pack.iterobjects():
            objects.setdefault(obj.id, obj)
    merged = store.add_objects([(obj, None) for obj in objects.values()])
    for pack in merge:
        if merged is None or pack.name() != merged.name():
            store._remove_pack(pack)
    store._update_pack_cache()
    return len(merge)


def forget(store: Store, name: str) -> None:
    _record_path(store, name).unlink(missing_ok=True)


def published_elsewhere(store: Store, name: str) -> set[ObjectID]:
    """The heads other remotes hold: each one's head after the last sync with it, and every
    `refs/remotes/<other>/main` (a plain `git fetch` sets those too)."""
    heads: set[ObjectID] = set()
    for path in (store.local_dir / "sync").glob("*.json"):
        found = last_synced(store, path.stem) if path.stem != name else None
        if found is not None:
            heads.add(ObjectID(found.encode("ascii")))
    refs = store.repo.refs
    for ref in refs.keys(base=Ref(b"refs/remotes/")):
        other, _, branch = ref.decode("utf-8", "replace").partition("/")
        if branch == "main" and other != name:
            with contextlib.suppress(KeyError):
                heads.add(refs[Ref(b"refs/remotes/" + ref)])
    return heads
