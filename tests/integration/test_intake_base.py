"""The intake gate given a base (the hosted store's head, which passed it): a push's tree is
read only where it differs from the base, and that must change no verdict. Forged entries are
laid over a tree that passed; the gate with the base refuses exactly when the gate without it
does. And `treediff.changed_files`, which the push gate and the checkout use in place of two
whole-tree walks, finds exactly the paths whose blobs differ."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from dulwich.objects import Commit
from dulwich.repo import Repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.adapters.store import gitcommit, treediff
from service.adapters.sync.errors import NotSelfhub
from service.adapters.sync.intake import RemoteRefused, check
from tests.integration.test_intake_properties import ENTRIES, SETTINGS, _nest, _write

PASSED: dict[tuple[bytes, ...], tuple[int, bytes]] = {
    (b"workspace.json",): (0o100644, SETTINGS),
    (b"workspace", b"log", b"000000.jsonl"): (0o100644, b"plain words\n"),
    (b"projects", b"app", b"log", b"000000.jsonl"): (0o100644, b"plain words\n"),
    (b"projects", b"web", b"log", b"000000.jsonl"): (0o100644, b""),
}
LAYOUT_PATHS = st.sampled_from(
    [
        (b"workspace.json",),
        (b"workspace", b"log", b"000000.jsonl"),
        (b"workspace", b"log", b"000001.jsonl"),
        (b"projects", b"app", b"log", b"000000.jsonl"),
        (b"projects", b"app", b"log", b"000001.jsonl"),
        (b"projects", b"web", b"log", b"000000.jsonl"),
    ]
)
TREES = st.dictionaries(LAYOUT_PATHS, st.tuples(st.just(0o100644), st.sampled_from([b"", b"a\n", b"b\n"])))


def _commit(
    repo: Repo, entries: dict[tuple[bytes, ...], tuple[int, bytes]], parent: bytes | None = None
) -> bytes:
    _, tree_id = _write(repo, _nest(entries))
    commit = Commit()
    commit.tree = tree_id
    commit.parents = [parent] if parent else []
    commit.author = commit.committer = b"m <m@example.invalid>"
    commit.author_time = commit.commit_time = 1
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = b"random\n"
    repo.object_store.add_object(commit)
    return commit.id


def _verdict(repo: Repo, commit: bytes, base: bytes | None) -> str:
    try:
        check(repo, commit, "the push", base=base)
    except (RemoteRefused, NotSelfhub) as exc:
        return type(exc).__name__
    return "passed"


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forged=ENTRIES)
def test_a_base_changes_no_verdict(forged: dict[tuple[bytes, ...], tuple[int, bytes]]) -> None:
    with tempfile.TemporaryDirectory() as folder, Repo.init_bare(str(Path(folder))) as repo:
        base = _commit(repo, PASSED)
        assert _verdict(repo, base, None) == "passed"
        pushed = _commit(repo, PASSED | forged, base)
        assert _verdict(repo, pushed, base) == _verdict(repo, pushed, None)


def test_a_forged_entry_beside_unchanged_logs_is_refused(tmp_path: Path) -> None:
    with Repo.init_bare(str(tmp_path)) as repo:
        base = _commit(repo, PASSED)
        link = {(b"projects", b"app", b"log", b"000001.jsonl"): (0o120000, b"/etc/passwd")}
        pushed = _commit(repo, PASSED | link, base)
        with pytest.raises(RemoteRefused, match="symbolic link"):
            check(repo, pushed, "the push", base=base)


@settings(max_examples=100, deadline=None)
@given(old=TREES, new=TREES)
def test_changed_files_are_the_paths_whose_blobs_differ(
    old: dict[tuple[bytes, ...], tuple[int, bytes]], new: dict[tuple[bytes, ...], tuple[int, bytes]]
) -> None:
    with tempfile.TemporaryDirectory() as folder, Repo.init_bare(str(Path(folder))) as repo:
        a, b = _commit(repo, old), _commit(repo, new)
        before, after = gitcommit.tree_files(repo, a), gitcommit.tree_files(repo, b)
        expected = {
            path: (before.get(path), after.get(path))
            for path in before.keys() | after.keys()
            if before.get(path) != after.get(path)
        }
        assert treediff.changed_files(repo, a, b) == expected
        assert treediff.changed_files(repo, None, b) == {path: (None, sha) for path, sha in after.items()}
