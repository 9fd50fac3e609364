"""Progress of `self clone` and `self sync`, as a person at a terminal sees it: the real
processes with stderr on a pseudo-terminal, over git daemon, a path and smart HTTP."""

from __future__ import annotations

import os
import random
import re
import select
import string
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.selfrun import SELF, TIMEOUT, Store, base_env
from tests.support.sync_support import ORIGIN, TS, bare, git_daemon, http_git

USER, TOKEN = "alice", "tok-0c4f2b9e81"


def grow(root: Path, count: int = 2000) -> None:
    """`count` events of about 330 bytes of random short words each, appended to project app
    (2,000 fill two segments: the next event starts a new one, so its push stays small)."""
    from service.adapters.store import Store as Workspace
    from service.core.events.events import Assertion, make

    rng = random.Random(count)
    with Workspace.open(root) as store, store.transaction("app") as tx:
        texts = [
            " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 8))) for _ in range(55))
            for _ in range(count)
        ]
        ids = tx.next_ids(len(texts))
        tx.append(
            [
                make(i, TS, "entity.proposed", ORIGIN, "app", Assertion(entity=i, text=t))
                for i, t in zip(ids, texts, strict=True)
            ]
        )


def on_terminal(args: tuple[str, ...], env: dict[str, str]) -> tuple[int, str, str]:
    """Run `self ARGS` with stderr on a pseudo-terminal; (exit code, stdout, the terminal's text)."""
    leader, follower = os.openpty()
    proc = subprocess.Popen(
        [SELF, *args], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower
    )
    os.close(follower)
    seen = bytearray()
    deadline = time.monotonic() + TIMEOUT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.2)
            if not ready:
                continue
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: every holder of the terminal's other end has closed it
                break
            if not chunk:
                break
            seen += chunk
        out, _ = proc.communicate(timeout=TIMEOUT)
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out.decode(), seen.decode(errors="replace")


def piped(args: tuple[str, ...], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SELF, *args], env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


def progress_in(text: str, label: str) -> bool:
    return f"{label}: " in text and " received, " in text and "/s" in text


BAR = re.compile(r"[A-Z][A-Za-z ]+ \[[#-]{20}\] +\d+% \(\d+/\d+\)")


@pytest.fixture(params=["daemon", "path", "http"])
def remote(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """An empty bare repository and the URL to reach it by, with the environment it needs."""
    served = tmp_path / "served"
    served.mkdir()
    path = bare(served / "ws.git")
    if request.param == "path":
        yield str(path), {}
    elif request.param == "daemon":
        with git_daemon(served) as port:
            yield f"git://127.0.0.1:{port}/ws.git", {}
    else:
        extra = {"SELF_TOKEN": TOKEN, "SELF_GIT_USERNAME": USER, "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
        with http_git(served, USER, TOKEN) as port:
            yield f"http://127.0.0.1:{port}/ws.git", extra


@pytest.mark.slow
def test_progress_on_a_terminal_only(
    store: Store, tmp_path: Path, remote: tuple[str, dict[str, str]]
) -> None:
    url, extra = remote
    grow(store.root)
    env = store.env(extra)  # type: ignore[arg-type]
    store.ok("remote", "add", url, env_extra=extra)  # type: ignore[arg-type]

    code, out, terminal = on_terminal(("sync",), env)
    assert code == 0 and "published" in out, terminal
    assert progress_in(terminal, "sync"), terminal
    assert "\r" in terminal  # the line rewrites itself

    clone_env = {**base_env(), **extra}
    code, out, terminal = on_terminal(("clone", url, str(tmp_path / "b")), clone_env)
    assert code == 0 and "cloned" in out, terminal
    assert progress_in(terminal, "clone"), terminal
    assert BAR.search(terminal), terminal  # the objects counted, copied and indexed, as a bar

    piped_clone = piped(("clone", url, str(tmp_path / "c")), clone_env)
    assert piped_clone.returncode == 0 and "cloned" in piped_clone.stdout, piped_clone.stderr
    assert piped_clone.stderr == ""  # not a terminal: no progress

    code, out, terminal = on_terminal(("clone", url, str(tmp_path / "d"), "--json"), clone_env)
    assert code == 0 and out.startswith("{") and terminal == "", terminal

    store.ok("state", "add", "one more record", "--label", "note", env_extra=extra)  # type: ignore[arg-type]
    code, out, terminal = on_terminal(("sync",), env)
    assert code == 0 and "1 pushed" in out
    assert terminal == ""  # one small segment: below the 256 KiB a sync moves before it shows progress

    grow(store.root)
    code, out, terminal = on_terminal(("sync", "--json"), env)
    assert code == 0 and '"pushed":' in out and terminal == ""
    proc = piped(("sync",), {**base_env(), **extra, "SELF_WORKSPACE": str(tmp_path / "b")})
    assert proc.returncode == 0 and "pulled" in proc.stdout and proc.stderr == ""
