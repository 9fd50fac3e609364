"""The git program as a team member runs it against the service's git endpoint: no system or
user configuration, no prompt, an identity; and event lines written by hand."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from service.adapters.store import clock
from service.core.events import ids
from tests.support.forge import line

Done = subprocess.CompletedProcess[str]


def git_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_AUTHOR_NAME": "ann",
        "GIT_AUTHOR_EMAIL": "ann@example.invalid",
        "GIT_COMMITTER_NAME": "ann",
        "GIT_COMMITTER_EMAIL": "ann@example.invalid",
        "LC_ALL": "C",
    }


def git(home: Path, *args: str, cwd: Path | None = None, timeout: float = 120) -> Done:
    env = git_env(home)
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def ok(home: Path, *args: str, cwd: Path | None = None) -> str:
    done = git(home, *args, cwd=cwd)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def url(base: str, secret: str | None, workspace: str) -> str:
    """The endpoint's URL for `workspace`, with `secret` as the basic-auth password."""
    host = base.removeprefix("http://")
    who = f"ann:{secret}@" if secret is not None else ""
    return f"http://{who}{host}/git/{workspace}.git"


def new_id() -> str:
    return ids.next_id(None, clock.wall_ms(), int.from_bytes(os.urandom(10), "big"))


def event(project: str, text: str, event_id: str | None = None) -> tuple[str, bytes]:
    """A new record's event line for `project`'s log, in canonical bytes; its id."""
    made = event_id or new_id()
    return made, line(made, {"entity": made, "text": text, "labels": ["idea"]}, project=project)


def append(clone: Path, project: str, lines: list[bytes]) -> None:
    """Add `lines` to `project`'s last segment in a git clone (a new segment past 1,000)."""
    folder = clone / "projects" / project / "log"
    folder.mkdir(parents=True, exist_ok=True)
    segments = sorted(folder.glob("*.jsonl")) or [folder / "000000.jsonl"]
    last = segments[-1]
    held = last.read_bytes() if last.exists() else b""
    for piece in lines:
        if held.count(b"\n") >= 1000:
            last.write_bytes(held)
            last = folder / f"{int(last.stem) + 1:06d}.jsonl"
            held = b""
        held += piece
    last.write_bytes(held)
