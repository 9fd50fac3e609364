"""`self gate` reads what the ruling needs from the checkout the call runs in (the hook's
`cwd`): whether a file a command overwrites exists, and the branch a bare `git push` writes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from dulwich import porcelain

from tests.support.selfrun import PROJECT, Store, base_env, describe, run_self


def checkout(folder: Path, branch: str, upstream: str | None) -> Path:
    """A git checkout on `branch`, tracking origin's `upstream`, with a committed file."""
    folder.mkdir()
    (folder / "notes.md").write_text("keep me\n", "utf-8")
    repo = porcelain.init(str(folder))
    identity = b"Test <test@example.invalid>"
    porcelain.add(repo, [str(folder / "notes.md")])
    porcelain.commit(repo, b"init", author=identity, committer=identity)
    head = repo.head()
    repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/" + branch.encode())
    repo.refs[b"refs/heads/" + branch.encode()] = head
    if upstream:
        config = repo.get_config()
        config.set((b"branch", branch.encode()), b"remote", b"origin")
        config.set((b"branch", branch.encode()), b"merge", b"refs/heads/" + upstream.encode())
        config.write_to_path()
    repo.close()
    return folder


def rule(store: Store, command: str, cwd: Path, in_hook: bool = True) -> dict[str, Any]:
    hook: dict[str, Any] = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }
    if in_hook:
        hook["cwd"] = str(cwd)
    proc = run_self(("gate",), store.env(), input=json.dumps(hook), cwd=cwd if not in_hook else store.cwd)
    assert proc.returncode == 0, describe(proc)
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def test_overwriting_an_existing_file_asks_and_a_new_one_passes(store: Store, tmp_path: Path) -> None:
    here = checkout(tmp_path / "app", "feature", "feature")
    assert rule(store, "echo > notes.md", here)["decision"] == "ask"
    assert "notes.md" in rule(store, "echo hi 1> notes.md", here)["reason"]
    assert rule(store, "echo > new.md", here)["decision"] == "allow"
    assert rule(store, "echo >> notes.md", here)["decision"] == "allow"
    # without a cwd in the hook, the gate's own working directory is the checkout
    assert rule(store, "echo > notes.md", here, in_hook=False)["decision"] == "ask"
    assert rule(store, "echo > new.md", here, in_hook=False)["decision"] == "allow"
    assert (here / "notes.md").read_text("utf-8") == "keep me\n"


def test_a_bare_push_asks_when_its_upstream_is_a_shared_branch(store: Store, tmp_path: Path) -> None:
    on_main = checkout(tmp_path / "main", "main", "main")
    topic = checkout(tmp_path / "topic", "topic", "main")
    feature = checkout(tmp_path / "feature", "feature", "feature")
    assert rule(store, "git push", on_main)["decision"] == "ask"
    assert "main" in rule(store, "git push", topic)["reason"]
    assert rule(store, "git push origin", topic)["decision"] == "ask"
    assert rule(store, "git push", feature)["decision"] == "allow"
    assert rule(store, "git push origin HEAD", feature)["decision"] == "allow"
    assert rule(store, "git push origin HEAD", on_main)["decision"] == "ask"


def test_outside_a_checkout_a_bare_push_asks(tmp_path: Path) -> None:
    hook = {"tool_name": "Bash", "tool_input": {"command": "git push"}, "cwd": str(tmp_path)}
    proc = run_self(("gate",), base_env(), input=json.dumps(hook), cwd=tmp_path)
    assert proc.returncode == 0, describe(proc)
    assert json.loads(proc.stdout)["decision"] == "ask"


# --- the policy cache (service/adapters/store/policies.py): a ruling is the one a fold gives ----

FORCE = "git push --force origin main"


def cache_file(store: Store) -> Path:
    return store.root / ".local" / "cache" / "gate" / f"{PROJECT}.json"


def force_push(store: Store) -> str:
    ruled: str = rule(store, FORCE, store.cwd)["decision"]
    return ruled


def deny_force_pushes(store: Store) -> None:
    store.ok(
        "decide", "never force-push", "--gate", "deny", "--tool", "Bash", "--pattern", "git push*--force*"
    )


@pytest.mark.process  # the `self` executable: the gate as a hook runs it
def test_a_policy_decided_after_the_cache_was_written_applies(store: Store) -> None:
    assert force_push(store) == "ask"
    assert cache_file(store).is_file()
    deny_force_pushes(store)
    assert force_push(store) == "deny"


@pytest.mark.process  # the `self` executable: the gate as a hook runs it
def test_a_log_edited_in_place_after_the_cache_was_written_is_read_again(store: Store) -> None:
    deny_force_pushes(store)
    assert force_push(store) == "deny"
    assert force_push(store) == "deny"  # from the cache
    # the policy's pattern changed by hand: same size, same mtime, one byte apart
    segment = store.log_file()
    stat = segment.stat()
    data = segment.read_bytes()
    assert data.count(b"git push*--force*") == 1
    segment.write_bytes(data.replace(b"git push*--force*", b"git push*--forcf*"))
    os.utime(segment, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert segment.stat().st_size == stat.st_size
    assert force_push(store) == "ask"


@pytest.mark.process  # the `self` executable: the gate as a hook runs it
def test_a_log_cut_back_after_the_cache_was_written_is_read_again(store: Store) -> None:
    store.ok("goal", "ship it")
    segment = store.log_file()
    before = segment.read_bytes()
    deny_force_pushes(store)
    assert force_push(store) == "deny"
    segment.write_bytes(before)  # as a reset to the commit before the policy leaves it
    assert force_push(store) == "ask"


@pytest.mark.process  # the `self` executable: the gate as a hook runs it
def test_a_stale_or_garbled_cache_never_changes_a_ruling(store: Store) -> None:
    assert force_push(store) == "ask"
    stale = cache_file(store).read_bytes()  # no policy yet
    deny_force_pushes(store)
    assert force_push(store) == "deny"
    for garbled in (stale, b"", b"\x00\xff not json", b'{"format":1}', cache_file(store).read_bytes()[:-9]):
        cache_file(store).write_bytes(garbled)
        assert force_push(store) == "deny", garbled
    # a file where the cache would be, a folder where its file would be: still ruled
    shutil.rmtree(cache_file(store).parent)
    cache_file(store).parent.write_text("not a folder")
    assert force_push(store) == "deny"
    cache_file(store).parent.unlink()
    cache_file(store).mkdir(parents=True)
    assert force_push(store) == "deny"


@pytest.mark.process  # the `self` executable: the gate as a hook runs it
def test_the_cache_answers_for_each_project_apart(store: Store) -> None:
    deny_force_pushes(store)
    store.ok("project", "add", "web")
    web = Store(store.root, "web")
    assert force_push(web) == "ask"
    assert force_push(store) == "deny"
    assert force_push(web) == "ask"
    assert (cache_file(store).parent / "web.json").is_file()
