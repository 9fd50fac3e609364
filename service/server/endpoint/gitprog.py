"""Running the `git` program for the endpoint: the environment it gets (no system or user
configuration, nothing of the service's own environment but PATH), and where it is."""

from __future__ import annotations

import os
import shutil

from service.server.endpoint.errors import GitMissing

_found: list[str] = []


def program() -> str:
    if not _found:
        path = shutil.which("git")
        if path is None:
            raise GitMissing("the git endpoint runs the git program, which is not installed: install git")
        _found.append(path)
    return _found[0]


def environment(settings: dict[str, str], **more: str) -> dict[str, str]:
    """An environment for git: PATH, no system or global config, `settings` as `-c` values."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "HOME": os.devnull,
        "LC_ALL": "C",
        "GIT_CONFIG_COUNT": str(len(settings)),
    }
    for n, (key, value) in enumerate(settings.items()):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    env.update(more)
    return env
