"""Sync over smart HTTP (`git http-backend` behind the tests' own server, basic auth), and the
credentials: from the environment or a 0600 file outside the store, never echoed."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.adapters.sync import AuthFailed, Options, SyncError, clone, remotes, sync
from service.adapters.sync.credentials import lookup
from tests.support.sync_support import append, bare, files, http_git, new_store, same, track

USER, TOKEN = "alice", "tok-3f9a8c1e7b2d"
FAST = Options(tries=8, timeout=10, pause=0.01, max_pause=0.05)


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("SELF_TOKEN", "SELF_GIT_PASSWORD", "SELF_GIT_USERNAME", "SELF_CREDENTIALS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    root = tmp_path / "served"
    root.mkdir()
    bare(root / "ws.git")
    with http_git(root, USER, TOKEN) as port:
        yield f"http://127.0.0.1:{port}/ws.git"


def test_two_replicas_over_smart_http(tmp_path: Path, served: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SELF_TOKEN", TOKEN)
    monkeypatch.setenv("SELF_GIT_USERNAME", USER)
    a = new_store(tmp_path / "a")
    remotes.add(a.repo, served)
    assert sync(a, options=FAST).created
    b = track(clone(served, tmp_path / "b", FAST)[0])
    append(a, 2)
    append(b, 3)
    sync(a, options=FAST)
    assert sync(b, options=FAST).pulled == 2
    assert sync(a, options=FAST).pulled == 3
    same(a, b)


def test_a_wrong_token_is_refused_and_never_echoed(
    tmp_path: Path, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = "wrong-token-77c1d0e5a9"
    monkeypatch.setenv("SELF_TOKEN", wrong)
    monkeypatch.setenv("SELF_GIT_USERNAME", USER)
    a = new_store(tmp_path / "a")
    before = files(a)
    remotes.add(a.repo, served)
    with pytest.raises(AuthFailed) as caught:
        sync(a, options=FAST)
    message = str(caught.value)
    assert "refused" in message and wrong not in message and TOKEN not in message
    assert files(a) == before
    assert wrong.encode() not in (a.root / ".git" / "config").read_bytes()


def test_no_credentials_says_what_to_set(tmp_path: Path, served: str) -> None:
    a = new_store(tmp_path / "a")
    remotes.add(a.repo, served)
    with pytest.raises(AuthFailed, match="SELF_TOKEN"):
        sync(a, options=FAST)


def write_credentials(path: Path, url: str, token: str, mode: int = 0o600) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({url.rsplit("/", 1)[0] + "/": {"username": USER, "token": token}}))
    os.chmod(path, mode)


def test_a_credentials_file_outside_the_store(tmp_path: Path, served: str) -> None:
    path = tmp_path / "config" / "selfhub" / "credentials"
    write_credentials(path, served, TOKEN)
    a = new_store(tmp_path / "a")
    remotes.add(a.repo, served)
    assert sync(a, options=FAST).created
    assert TOKEN.encode() not in b"".join(files(a).values())


def test_a_credentials_file_others_can_read_is_refused(tmp_path: Path, served: str) -> None:
    path = tmp_path / "config" / "selfhub" / "credentials"
    write_credentials(path, served, TOKEN, mode=0o644)
    a = new_store(tmp_path / "a")
    remotes.add(a.repo, served)
    with pytest.raises(SyncError, match="chmod 600") as caught:
        sync(a, options=FAST)
    assert TOKEN not in str(caught.value)


def test_a_credentials_file_inside_the_store_is_refused(
    tmp_path: Path, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = new_store(tmp_path / "a")
    inside = a.root / "creds.json"
    write_credentials(inside, served, TOKEN)
    monkeypatch.setenv("SELF_CREDENTIALS", str(inside))
    with pytest.raises(SyncError, match="inside the workspace store"):
        lookup(served, a.root)


def test_the_longest_prefix_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "creds"
    path.write_text(
        json.dumps(
            {
                "https://git.example/": {"username": "u1", "token": "t1"},
                "https://git.example/team/": {"username": "u2", "token": "t2"},
            }
        )
    )
    os.chmod(path, 0o600)
    monkeypatch.setenv("SELF_CREDENTIALS", str(path))
    found = lookup("https://git.example/team/ws.git")
    assert found is not None and (found.username, found.token) == ("u2", "t2")
    assert "t2" not in repr(found)
    assert lookup("https://other.example/ws.git") is None


def test_an_entry_for_another_port_or_host_sends_no_token(tmp_path: Path, served: str) -> None:
    """`http://127.0.0.1:4123` is not `http://127.0.0.1:41234`, nor is `github.com` a prefix
    of `github.com.evil.example`: the token stays home and the server asks for credentials."""
    origin = served.rsplit("/", 1)[0]  # http://127.0.0.1:PORT
    path = tmp_path / "config" / "selfhub" / "credentials"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                origin[:-1]: {"username": USER, "token": TOKEN},
                "http://127.0.0": {"username": USER, "token": TOKEN},
            }
        )
    )
    os.chmod(path, 0o600)
    a = new_store(tmp_path / "a")
    remotes.add(a.repo, served)
    with pytest.raises(AuthFailed, match="none are set"):
        sync(a, options=FAST)
    assert lookup(served) is None
    assert lookup(served.replace("127.0.0.1", "127.0.0.1.evil.example")) is None
