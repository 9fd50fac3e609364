"""`self agent install claude` in a checkout, and both hooks run as Claude Code runs them
(the command from the settings file through a shell, in the checkout, the hook's JSON on
stdin): the session starts with the project's context from a real service, or from the
local store; the tool hook answers with the gate's decision; uninstall restores the file."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.selfrun import SELF, base_env, describe, run_self
from tests.support.serving import Service, admin, token

WS, SLUG, GOAL = "acme", "web", "ship the first page"
THEIRS = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo theirs"}]}]},
}


@pytest.fixture()
def team(tmp_path: Path) -> Any:
    data = tmp_path / "data"
    admin(data, "workspace", "add", WS)
    admin(data, "user", "add", "agent")
    reader = token(data, "agent", WS, "reader")
    store = data / "workspaces" / WS
    env = base_env() | {"SELF_WORKSPACE": str(store), "SELF_PROJECT": SLUG}
    for args in (("project", "add", SLUG), ("goal", "add", GOAL)):
        assert run_self(args, env).returncode == 0
    service = Service(data, tmp_path / "serve.log")
    yield service, reader, store
    assert service.stop() == 0


def checkout(tmp_path: Path) -> Path:
    folder = tmp_path / "app"
    (folder / ".claude").mkdir(parents=True)
    (folder / ".claude" / "settings.json").write_text(json.dumps(THEIRS, indent=2) + "\n")
    return folder


def hook_commands(folder: Path, event: str) -> list[str]:
    settings = json.loads((folder / ".claude" / "settings.json").read_text())
    return [h["command"] for g in settings["hooks"].get(event, []) for h in g["hooks"]]


def run_hook(command: str, folder: Path, env: dict[str, str], stdin: dict[str, Any]) -> str:
    """What Claude Code does: the command through a shell, in the project, JSON on stdin."""
    path = f"{Path(SELF).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=folder,
        env=env | {"PATH": path},
        input=json.dumps(stdin),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"{command}: {done.stderr}"
    return done.stdout


def test_the_hooks_give_the_services_context_and_the_gates_decision(team: Any, tmp_path: Path) -> None:
    service, reader, _ = team
    folder = checkout(tmp_path)
    url = f"{service.url}/git/{WS}.git"
    installed = run_self(("agent", "install", "claude", "--service", url, "--dir", str(folder)), base_env())
    assert installed.returncode == 0, describe(installed)
    assert hook_commands(folder, "PreToolUse") == ["echo theirs", "self gate"]
    (start,) = hook_commands(folder, "SessionStart")
    env = base_env() | {"SELF_TOKEN": reader, "SELF_PROJECT": SLUG}  # no local store at all
    said = run_hook(start, folder, env, {"hook_event_name": "SessionStart", "source": "startup"})
    assert GOAL in said and "the service at" not in said, said
    tool = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git push --force origin main"},
        "cwd": str(folder),
    }
    answer = json.loads(run_hook("self gate", folder, env, tool))
    assert answer["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    assert answer["hookSpecificOutput"]["permissionDecision"] in ("ask", "deny"), answer
    removed = run_self(("agent", "uninstall", "claude", "--dir", str(folder)), base_env())
    assert removed.returncode == 0, describe(removed)
    assert json.loads((folder / ".claude" / "settings.json").read_text()) == THEIRS
    assert not (folder / ".claude" / "selfhub-hooks.json").exists()


def test_without_a_service_the_session_starts_with_the_local_stores_context(
    team: Any, tmp_path: Path
) -> None:
    _, _, store = team
    folder = checkout(tmp_path)
    assert run_self(("agent", "install", "claude", "--dir", str(folder)), base_env()).returncode == 0
    (start,) = hook_commands(folder, "SessionStart")
    env = base_env() | {"SELF_WORKSPACE": str(store), "SELF_PROJECT": SLUG}
    assert GOAL in run_hook(start, folder, env, {"hook_event_name": "SessionStart"})


def test_a_service_that_refuses_the_token_falls_back_and_says_so(team: Any, tmp_path: Path) -> None:
    service, _, store = team
    folder = checkout(tmp_path)
    url = f"{service.url}/git/{WS}.git"
    assert (
        run_self(
            ("agent", "install", "claude", "--service", url, "--dir", str(folder)), base_env()
        ).returncode
        == 0
    )
    (start,) = hook_commands(folder, "SessionStart")
    env = base_env() | {"SELF_TOKEN": "shb_" + "x" * 43, "SELF_WORKSPACE": str(store), "SELF_PROJECT": SLUG}
    said = run_hook(start, folder, env, {"hook_event_name": "SessionStart"})
    assert "HTTP 401" in said and GOAL in said, said
    assert "shb_" not in said


def test_broken_settings_are_refused_and_left_as_they_are(tmp_path: Path) -> None:
    folder = tmp_path / "app"
    (folder / ".claude").mkdir(parents=True)
    (folder / ".claude" / "settings.json").write_text("{not json")
    done = run_self(("agent", "install", "claude", "--dir", str(folder)), base_env())
    assert done.returncode == 1 and "not JSON" in done.stderr and "nothing was changed" in done.stderr
    assert (folder / ".claude" / "settings.json").read_text() == "{not json"
