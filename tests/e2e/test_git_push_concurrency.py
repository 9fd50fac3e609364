"""Eight pushers at once on the service's git endpoint — six with the git program, two with
`self sync` — fifty rounds each: no push reported "ok" is missing afterwards, and no event is
held twice. The same load on C git's own `git http-backend` (the control) loses nothing
either; the rates side by side are in bench/service.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import gitclient as gc
from tests.support import pushers
from tests.support.serving import Service, admin, token
from tests.support.sync_support import http_git

pytestmark = pytest.mark.slow  # minutes: 400 pushes each

WS = "acme"
GIT_PUSHERS, SELF_PUSHERS, ROUNDS, SELF_ROUNDS = 6, 2, 50, 50


def test_eight_pushers_on_the_endpoint_lose_no_acknowledged_push(tmp_path: Path) -> None:
    data = tmp_path / "data"
    admin(data, "workspace", "add", WS)
    admin(data, "user", "add", "ann")
    secrets = [token(data, "ann", WS, "writer") for _ in range(GIT_PUSHERS + SELF_PUSHERS)]
    service = Service(data, tmp_path / "serve.log")
    try:
        done = pushers.run(
            lambda secret: gc.url(service.url, secret, WS),
            tmp_path / "work",
            secrets,
            git_pushers=GIT_PUSHERS,
            self_pushers=SELF_PUSHERS,
            rounds=ROUNDS,
            self_rounds=SELF_ROUNDS,
        )
        assert not done.failures, done.failures
        assert done.pushes == GIT_PUSHERS * ROUNDS + SELF_PUSHERS * SELF_ROUNDS
        assert done.rejected > 0, "the pushers did contend"
        assert pushers.missing(gc.url(service.url, secrets[0], WS), tmp_path / "work", done.acked) == []
        fsck = gc.git(tmp_path, "fsck", "--strict", cwd=data / "workspaces" / WS)
        assert fsck.returncode == 0, fsck.stderr
    finally:
        assert service.stop() == 0


def test_the_same_load_on_git_http_backend_loses_nothing(tmp_path: Path) -> None:
    root = tmp_path / "repos"
    seed = tmp_path / "seed"
    admin(seed, "workspace", "add", WS)  # the same first commit as a hosted workspace
    gc.ok(tmp_path, "clone", "-q", "--bare", str(seed / "workspaces" / WS), str(root / f"{WS}.git"))
    with http_git(root, "ann", "secret") as port:
        url = f"http://ann:secret@127.0.0.1:{port}/{WS}.git"
        done = pushers.run(
            lambda _: url,
            tmp_path / "work",
            ["secret"] * (GIT_PUSHERS + SELF_PUSHERS),
            git_pushers=GIT_PUSHERS,
            self_pushers=SELF_PUSHERS,
            rounds=ROUNDS,
            self_rounds=SELF_ROUNDS,
        )
        assert not done.failures, done.failures
        assert pushers.missing(url, tmp_path / "work", done.acked) == []
