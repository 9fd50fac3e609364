"""Secrets and machine-local facts as a `self` process sees them: a remote URL never carries
a credential into `.git/config` or onto the screen, workspace.json passes the sanitize gate,
and a refusal says what it refused (a control character is not a secret)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.selfrun import Store, describe
from tests.support.sync_support import free_port, http_git

GH = "ghp_" + "Q7w9E1r3T5y7U9i1O3p5A7s9D1f3G5h7J9k1"
PLAIN = "tok3f9a8c1e7b2d"


def printed(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stdout + proc.stderr


def git_config(store: Store) -> str:
    return (store.root / ".git" / "config").read_text("utf-8")


@pytest.mark.parametrize(
    "url",
    [
        f"https://{GH}@github.com/a/b.git",
        f"https://{PLAIN}@github.com/a/b.git",
        f"https://oauth2:{PLAIN}@gitlab.example/a/b.git",
        f"https://github.com/a/b.git?access_token={PLAIN}",
        f"ssh://{GH}@github.com/a/b.git",
    ],
    ids=["token-user", "plain-token-user", "user-password", "query", "ssh-token-user"],
)
def test_remote_add_and_clone_refuse_a_url_with_credentials(store: Store, url: str, tmp_path: Path) -> None:
    clone = ("clone", url, str(tmp_path / "cloned"))
    for args in (("remote", "add", url), ("remote", "add", url, "--json"), clone):
        proc = store.run(*args)
        assert proc.returncode == 1, describe(proc)
        assert "SELF_TOKEN" in proc.stderr and "credentials file" in proc.stderr
        assert GH not in printed(proc) and PLAIN not in printed(proc)
    assert GH not in git_config(store) and PLAIN not in git_config(store)
    assert store.json("remote", "list") == [] and not (tmp_path / "cloned").exists()


def plant(store: Store, name: str, url: str) -> None:
    """A remote written to .git/config by an older selfhub or by plain git."""
    config = store.root / ".git" / "config"
    for key, value in (("url", url), ("fetch", f"+refs/heads/main:refs/remotes/{name}/main")):
        subprocess.run(["git", "config", "-f", str(config), f"remote.{name}.{key}", value], check=True)


@pytest.mark.slow
def test_a_url_with_credentials_already_in_git_config_is_never_printed(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "served"
    root.mkdir()
    subprocess.run(["git", "init", "--bare", "-q", str(root / "ws.git")], check=True)
    closed = free_port()
    with http_git(root, "alice", "the-right-token") as port:
        plant(store, "a", f"http://{GH}@127.0.0.1:{port}/ws.git")
        plant(store, "b", f"http://alice:{PLAIN}@127.0.0.1:{port}/ws.git")
        plant(store, "c", f"http://127.0.0.1:{port}/ws.git?access_token={PLAIN}")
        plant(store, "d", f"http://{GH}@127.0.0.1:{closed}/ws.git")
        runs = [
            store.run("remote", "list"),
            store.run("remote", "list", "--json"),
            store.run("sync", "--timeout", "5"),
            store.run("sync", "--timeout", "5", "--json"),
            *(store.run("sync", name, "--timeout", "5") for name in "abcd"),
            store.run("remote", "add", "https://github.com/a/b.git", "--name", "a"),
            store.run("remote", "remove", "c"),
        ]
    for proc in runs:
        assert GH not in printed(proc) and PLAIN not in printed(proc), describe(proc)
        assert "Traceback" not in proc.stderr
    listed = {row["name"]: row["url"] for row in json.loads(runs[1].stdout)}
    assert listed["a"] == f"http://***@127.0.0.1:{port}/ws.git"
    assert listed["c"] == f"http://127.0.0.1:{port}/ws.git?***"
    assert all(proc.returncode == 1 for proc in runs[2:9]), [describe(p) for p in runs[2:9]]


def test_alias_add_refuses_a_token_or_a_home_path(store: Store) -> None:
    before = store.files()
    for args in (
        ("alias", "add", GH, "--label", "work"),
        ("alias", "add", "sprint", "--label", "/home/alice/notes"),
        ("alias", "set", "goal", "--label", f"deploy with {GH}"),
    ):
        proc = store.run(*args)
        assert proc.returncode == 2, describe(proc)
        assert "refused" in proc.stderr and "workspace.json" in proc.stderr
        assert GH not in printed(proc) and "/home/alice" not in printed(proc)
    assert store.files() == before
    assert GH not in (store.root / "workspace.json").read_text("utf-8")


def test_machine_independent_text_is_recorded(store: Store) -> None:
    store.add("decide", "hooks live in ~/.claude/settings.json", "--why", "the tool reads them there")
    store.add("goal", "replay session_01RR19nj3Epadxj44kZZsgTF")
    texts = {row["text"] for row in store.rows()}
    assert {"hooks live in ~/.claude/settings.json", "replay session_01RR19nj3Epadxj44kZZsgTF"} <= texts


@pytest.mark.parametrize(
    ("text", "shown"),
    [("ring \x07 twice", "U+0007"), ("approve \u202egnp.exe", "U+202E")],
    ids=["bell", "bidi-override"],
)
def test_a_control_character_is_refused_as_one(store: Store, text: str, shown: str) -> None:
    proc = store.run("goal", text)
    assert proc.returncode == 2, describe(proc)
    assert "control character" in proc.stderr and shown in proc.stderr
    assert "secret" not in proc.stderr
    assert text not in printed(proc) and "\u202e" not in printed(proc)


def test_help_sanitize_prints_the_rule() -> None:
    from tests.support.selfrun import base_env, run_self

    proc = run_self(("help", "sanitize"), base_env())
    assert proc.returncode == 0, describe(proc)
    for phrase in ("~/", "session_", "/home/<name>/", "control character", "bidirectional", "ghp_"):
        assert phrase in proc.stdout, phrase
    overview = run_self(("help",), base_env())
    assert overview.returncode == 0 and "sanitize" in overview.stdout, describe(overview)
    unknown = run_self(("help", "nope"), base_env())
    assert unknown.returncode == 1 and "sanitize" in unknown.stderr, describe(unknown)


def test_what_self_prints_never_holds_a_raw_control_character(store: Store, tmp_path: Path) -> None:
    """Text from outside the record (an argument, a path, a URL) is echoed escaped: a bidi
    override or an escape sequence shows as \\uXXXX and never acts on the terminal."""
    runs = [
        store.run("remote", "add", str(tmp_path / "r\u202ex.git"), "--init"),
        store.run("remote", "list"),
        store.run("goal", "show", "zz\u202e"),
        store.run("goal", "show", "\x1b[2Jzz"),
        store.run("import", "superself", str(tmp_path / "nope\u2066")),
    ]
    for proc in runs:
        assert "\u202e" not in printed(proc) and "\u2066" not in printed(proc), describe(proc)
        assert "\x1b" not in printed(proc), describe(proc)
    assert "\\u202e" in runs[0].stdout and "\\u202e" in runs[1].stdout
    assert runs[2].returncode == 1 and "\\u202e" in runs[2].stderr, describe(runs[2])
