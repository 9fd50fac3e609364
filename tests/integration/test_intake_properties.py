"""The intake gate over random trees: whatever names and modes a remote forges, `check`
either refuses with a RemoteRefused (one line, nothing unprintable in it) or returns only
paths of the store's layout, each a blob, and never raises anything else."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from dulwich.object_store import tree_lookup_path
from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from service.adapters.store import layout
from service.adapters.sync.errors import NotSelfhub
from service.adapters.sync.intake import RemoteRefused, check

SETTINGS = b"{}\n"
ATTACKS = [b".", b"..", b".git", b".GIT", b".git.", b"git~1", b".g\xe2\x80\x8cit", b"\xff", b"a\x1b"]
# At each depth: the layout's names there, the names an attacker tries, and anything else.
LAYOUT_NAMES = [
    [b"workspace.json", b"workspace", b"projects"],
    [b"log", b"app", b"web"],
    [b"log", b"000000.jsonl"],
    [b"000000.jsonl", b"000001.jsonl"],
]
ANY_NAME = st.binary(min_size=1, max_size=12).filter(lambda b: b"/" not in b and b"\0" not in b)
MODES = st.sampled_from([0o100644, 0o100644, 0o100755, 0o040000, 0o120000, 0o160000, 0o100664])


@st.composite
def paths(draw: st.DrawFn) -> tuple[bytes, ...]:
    depth = draw(st.sampled_from([1, 2, 3, 4, 4, 4]))
    names = []
    for d in range(depth):
        usual = st.sampled_from(LAYOUT_NAMES[d])  # most names are the layout's: deep paths occur
        names.append(draw(st.one_of(usual, usual, usual, usual, st.sampled_from(ATTACKS), ANY_NAME)))
    return tuple(names)


DATA = st.one_of(st.sampled_from([b"", b"plain words\n", SETTINGS]), st.binary(max_size=40))
ENTRIES = st.dictionaries(paths(), st.tuples(MODES, DATA), max_size=4)


def _nest(entries: dict[tuple[bytes, ...], tuple[int, bytes]]) -> dict[bytes, object]:
    """Paths to nested dicts (a later path through a leaf turns the leaf into a folder)."""
    root: dict[bytes, object] = {}
    for parts, leaf in entries.items():
        node = root
        for name in parts[:-1]:
            child = node.get(name)
            if not isinstance(child, dict):
                child = node[name] = {}
            node = child
        node[parts[-1]] = leaf
    return root


def _write(repo: Repo, node: object) -> tuple[int, bytes]:
    """(mode, id) of a node: a dict is a tree, a (mode, data) pair a leaf."""
    if isinstance(node, dict):
        tree = Tree()
        for name, child in node.items():
            mode, sha = _write(repo, child)
            tree.add(name, mode, sha)
        repo.object_store.add_object(tree)
        return 0o040000, tree.id
    mode, data = node  # type: ignore[misc]
    if mode == 0o160000:
        return mode, b"1" * 40  # a gitlink names a commit that is not there
    blob = Blob.from_string(data)
    repo.object_store.add_object(blob)
    return (0o100644 if mode == 0o040000 else mode), blob.id


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries=ENTRIES, with_settings=st.booleans())
@example(entries={(b"projects", b"app", b"log", b"000000.jsonl"): (0o120000, b"")}, with_settings=True)
@example(entries={(b"workspace", b"log", b"000001.jsonl"): (0o160000, b"")}, with_settings=True)
@example(entries={(b".", b".git", b"config"): (0o100644, b"[core]\n")}, with_settings=True)
def test_check_refuses_cleanly_or_returns_only_the_layout(
    entries: dict[tuple[bytes, ...], tuple[int, bytes]], with_settings: bool
) -> None:
    root = _nest(entries)
    if with_settings:
        root[b"workspace.json"] = (0o100644, SETTINGS)
    with tempfile.TemporaryDirectory() as folder, Repo.init_bare(str(Path(folder))) as repo:
        _, tree_id = _write(repo, root)
        commit = Commit()
        commit.tree = tree_id
        commit.author = commit.committer = b"m <m@example.invalid>"
        commit.author_time = commit.commit_time = 1
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = b"random\n"
        repo.object_store.add_object(commit)
        try:
            files = check(repo, commit.id, "the remote")
        except (RemoteRefused, NotSelfhub) as exc:
            text = str(exc)
            assert "\n" not in text and text.isprintable(), text
            return
        for path, sha in files.items():
            assert path == layout.CONFIG_FILE or layout.log_of_path(path) is not None, path
            mode, found = tree_lookup_path(repo.__getitem__, tree_id, path.encode())
            assert mode in (0o100644, 0o100755) and found == sha and isinstance(repo[sha], Blob)
