"""`self gate` reads what the ruling needs from the checkout the call runs in (the hook's
`cwd`): whether a file a command overwrites exists, and the branch a bare `git push` writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dulwich import porcelain

from tests.support.selfrun import Store, base_env, describe, run_self


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
