"""Hostile remotes for the intake tests: commits forged with dulwich straight into a bare
repository (no selfhub code), the way an attacker with push access would make them.

`forge(remote, {path_parts: (mode, data)})` puts a commit on the remote's main whose tree is
main's with those entries set; names are bytes, so `.`, `.git`, non-UTF-8 names and any mode
(symlink 0o120000, gitlink 0o160000) can be written. Used by tests/integration and tests/e2e.
"""

from __future__ import annotations

import json
from pathlib import Path

from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo

FILE, DIR, SYMLINK, GITLINK = 0o100644, 0o040000, 0o120000, 0o160000
MAIN = b"refs/heads/main"
Entries = dict[tuple[bytes, ...], tuple[int, bytes]]


def forge(remote: Path, entries: Entries, message: str = "forged") -> bytes:
    """A commit on `remote`'s main with `entries` set in its tree; main moves to it. For a
    gitlink `data` is the commit id it names (hex); for the others it is the blob's bytes."""
    with Repo(str(remote)) as repo:
        parent = repo.refs[MAIN]
        parent_commit = repo[parent]
        assert isinstance(parent_commit, Commit)
        root = repo[parent_commit.tree]
        assert isinstance(root, Tree)
        for parts, (mode, data) in entries.items():
            root = _set(repo, root, parts, mode, data)
        commit = Commit()
        commit.tree = root.id
        commit.parents = [parent]
        commit.author = commit.committer = b"mallory <m@example.invalid>"
        commit.author_time = commit.commit_time = parent_commit.commit_time + 1
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = message.encode() + b"\n"
        repo.object_store.add_object(commit)
        repo.refs[MAIN] = commit.id
        return commit.id


def _set(repo: Repo, tree: Tree | None, parts: tuple[bytes, ...], mode: int, data: bytes) -> Tree:
    new = Tree()
    if tree is not None:
        for entry in tree.iteritems():
            new.add(entry.path, entry.mode, entry.sha)
    name, rest = parts[0], parts[1:]
    if rest:
        sub = None
        if name in new and new[name][0] == DIR:
            found = repo[new[name][1]]
            assert isinstance(found, Tree)
            sub = found
        new[name] = (DIR, _set(repo, sub, rest, mode, data).id)
    elif mode == GITLINK:
        new[name] = (GITLINK, data)
    else:
        blob = Blob.from_string(data)
        repo.object_store.add_object(blob)
        new[name] = (mode, blob.id)
    repo.object_store.add_object(new)
    return new


def read(remote: Path, parts: tuple[bytes, ...]) -> bytes:
    """The bytes of a file on the remote's main."""
    with Repo(str(remote)) as repo:
        commit = repo[repo.refs[MAIN]]
        assert isinstance(commit, Commit)
        node = repo[commit.tree]
        for name in parts:
            assert isinstance(node, Tree)
            node = repo[node[name][1]]
        assert isinstance(node, Blob)
        return node.as_raw_string()


def head(remote: Path) -> bytes:
    with Repo(str(remote)) as repo:
        return repo.refs[MAIN]


def reset(remote: Path, commit: bytes) -> None:
    """Put the remote's main back (the remote's owner removing the forged commit)."""
    with Repo(str(remote)) as repo:
        repo.refs[MAIN] = commit


SEGMENT = (b"projects", b"app", b"log", b"000000.jsonl")
HOOK = b"[core]\n\tfsmonitor = touch pwned-by-remote\n"


def line(
    event_id: str,
    payload: dict[str, object],
    origin: dict[str, object] | None = None,
    refs: dict[str, object] | None = None,
    project: str = "app",
) -> bytes:
    """One event line in canonical form (sorted keys, no whitespace), built by hand."""
    event: dict[str, object] = {
        "id": event_id,
        "origin": origin or {"actor": "agent", "confirmed": True},
        "payload": payload,
        "project": project,
        "ts": "2026-11-30T09:57:45.069Z",
        "type": "entity.proposed",
    }
    if refs is not None:
        event["refs"] = refs
    return json.dumps(event, sort_keys=True, separators=(",", ":")).encode() + b"\n"


# A valid id for the forged events (its place among the log's ids does not matter to the gate).
LATE_ID = "01kg0000000000000000000000"


def leaky_event() -> bytes:
    """An event carrying a pid, a hostname, a home path and a token."""
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    return line(
        LATE_ID,
        {"entity": LATE_ID, "text": f"see /home/alice/notes with {token}"},
        origin={"actor": "agent", "confirmed": True, "pid": 4242},
        refs={"hostname": "alice-laptop"},
    )


def hostile_trees(remote: Path) -> dict[str, Entries]:
    """Every forged tree the gate must refuse, by name (each set on the current main)."""
    segment = read(remote, SEGMENT)
    head_hex = head(remote)
    plain = line(LATE_ID, {"entity": LATE_ID, "text": "plain"})
    huge = plain * (70_000_000 // len(plain))  # over 1,000 events of 64 KiB
    other = line(LATE_ID, {"entity": LATE_ID, "text": "x"}, project="web")
    return {
        "dot": {(b".", b".git", b"config"): (FILE, HOOK)},
        "dotdot": {(b"..", b"outside.txt"): (FILE, b"escaped\n")},
        "dot-git": {(b".git", b"hooks", b"post-checkout"): (FILE, b"#!/bin/sh\ntouch pwned\n")},
        "dot-GIT": {(b".GIT", b"config"): (FILE, HOOK)},
        "dot-git-trailing-dot": {(b"projects", b".git.", b"config"): (FILE, HOOK)},
        "symlink": {(b"projects", b"app", b"log", b"000001.jsonl"): (SYMLINK, b"../../../../outside.txt")},
        "gitlink": {(b"projects", b"app", b"log", b"000001.jsonl"): (GITLINK, head_hex)},
        "non-utf8": {(b"projects", b"app", b"log", b"\xff\xfe.jsonl"): (FILE, b"")},
        "unknown-path": {(b"notes.txt",): (FILE, b"x" * 1_000_000)},
        "bad-settings": {(b"workspace.json",): (FILE, b"{not json")},
        "wrong-settings": {(b"workspace.json",): (FILE, b'{"caps": 5}\n')},
        "huge-segment": {(b"projects", b"app", b"log", b"000001.jsonl"): (FILE, huge)},
        "leaky-event": {SEGMENT: (FILE, segment + leaky_event())},
        "long-line": {SEGMENT: (FILE, segment + line(LATE_ID, {"entity": LATE_ID, "text": "y" * 70_000}))},
        "not-canonical": {SEGMENT: (FILE, segment + plain.replace(b'","', b'", "', 1))},
        "other-log": {SEGMENT: (FILE, segment + other)},
    }
