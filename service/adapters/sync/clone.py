"""`self clone`: a new store from a remote that holds a selfhub workspace."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from dulwich.objects import Commit
from dulwich.repo import Repo

from service.adapters.store import Store, gitcommit, layout
from service.adapters.sync import identity, intake, logs, prefix, remotes
from service.adapters.sync.engine import Options, Summary
from service.adapters.sync.errors import EmptyRemote, SyncError
from service.adapters.sync.remembered import remember
from service.adapters.sync.transport import Connection


def clone(url: str, directory: Path | None = None, options: Options | None = None) -> tuple[Store, Summary]:
    """Fetch the remote's main into a new store at `directory` (default: the URL's last part)."""
    opts = options or Options()
    started = time.monotonic()
    stored = remotes.normalize(url)
    target = Path(directory) if directory is not None else Path(_default_dir(stored))
    if target.exists() and any(target.iterdir()):
        raise SyncError(f"{target} exists and is not empty; clone into a new or empty folder")
    made = not target.exists()
    conn = Connection(stored, opts.timeout, None, opts.activity, opts.stage, opts.deadline)
    summary = Summary(remote=remotes.DEFAULT, url=conn.shown)
    try:
        target.mkdir(parents=True, exist_ok=True)
        repo = Repo.init(str(target), default_branch=b"main")
        try:
            head = conn.fetch(repo)
            if head is None:
                raise EmptyRemote(f"{conn.shown} is empty: there is nothing to clone")
            files = intake.check(repo, head, conn.shown, local=Store(target).local_facts())
            commit = repo[head]
            assert isinstance(commit, Commit)
            from dulwich.index import build_index_from_tree

            repo.refs[gitcommit.BRANCH] = head
            build_index_from_tree(str(target), repo.index_path(), repo.object_store, commit.tree)
            remotes.add(repo, stored, remotes.DEFAULT)
        finally:
            conn.close()
            repo.close()
        store = Store.open(target)
        top, total = None, 0
        spans: dict[str, prefix.Span] = {}  # what the next sync need not read again
        for log in store.logs():
            folder = layout.log_dir(log)
            for name in layout.segments(store.root, log):
                path = f"{folder}/{name}"
                data = (store.root / path).read_bytes()
                found = logs.id_set(logs.lines_of(data))
                total += len(found)
                if found:
                    top = max(top or "", max(found))
                span = prefix.span_of(data, found)
                if span is not None and path in files:
                    spans[files[path].decode("ascii")] = span
        identity.check_horizon(filter(None, [top]), remotes.DEFAULT, conn.shown)
        if top:
            store.observe([top])
        with store.locked():
            remember(store, remotes.DEFAULT, head)
            prefix.remember(store.local_dir, spans.items())
    except BaseException:
        if made:
            shutil.rmtree(target, ignore_errors=True)
        else:
            for child in list(target.iterdir()):
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink()
        raise
    summary.head = head.decode()
    summary.pulled = total
    summary.bytes_received, summary.bytes_sent = conn.received, conn.sent
    summary.seconds = round(time.monotonic() - started, 3)
    return store, summary


def _default_dir(url: str) -> str:
    name = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    name = name[:-4] if name.endswith(".git") else name
    return name or "workspace"
