"""Remote URLs carry no credentials; printed text never shows one; a credentials file entry
matches a URL by scheme, host and port exactly and by whole path segments.

Pure string functions of the sync adapter (no file, no network): `remotes.normalize` on
URLs, `credentials.redact`, `credentials.url_secrets` and `credentials.match`.
"""

from __future__ import annotations

import pytest

from service.adapters.sync import SyncError, remotes
from service.adapters.sync.credentials import match, redact, url_secrets

GH = "ghp_" + "Q7w9E1r3T5y7U9i1O3p5A7s9D1f3G5h7J9k1"
PLAIN = "tok3f9a8c1e7b2d"  # a token of no known format

REFUSED_URLS: list[tuple[str, str]] = [
    # (label, URL); the secret in each is GH or PLAIN
    ("token as user", f"https://{GH}@github.com/a/b.git"),
    ("plain token as user", f"https://{PLAIN}@github.com/a/b.git"),
    ("user and token", f"https://alice:{PLAIN}@github.com/a/b.git"),
    ("oauth user", f"https://oauth2:{PLAIN}@gitlab.example/a/b.git"),
    ("empty user", f"https://:{PLAIN}@github.com/a/b.git"),
    ("query token", f"https://github.com/a/b.git?access_token={PLAIN}"),
    ("query private token", f"http://127.0.0.1:8089/ws.git?private_token={PLAIN}"),
    ("fragment token", f"https://github.com/a/b.git#{PLAIN}"),
    ("git user", f"git://{PLAIN}@127.0.0.1/ws.git"),
    ("file user", f"file://{PLAIN}@localhost/srv/ws.git"),
    ("ssh password", f"ssh://git:{PLAIN}@github.com/a/b.git"),
    ("ssh token user", f"ssh://{GH}@github.com/a/b.git"),
    ("ssh query", f"ssh://git@github.com/a/b.git?token={PLAIN}"),
    ("scp token user", f"{GH}@github.com:a/b.git"),
    ("token in path", f"https://github.com/{GH}/b.git"),
]


@pytest.mark.parametrize("url", [u for _, u in REFUSED_URLS], ids=[label for label, _ in REFUSED_URLS])
def test_a_url_holding_credentials_is_refused_without_repeating_them(url: str) -> None:
    with pytest.raises(SyncError) as caught:
        remotes.normalize(url)
    message = str(caught.value)
    assert GH not in message and PLAIN not in message
    assert "SELF_TOKEN" in message and "credentials file" in message


ACCEPTED_URLS = [
    "https://github.com/a/b.git",
    "http://127.0.0.1:8089/ws.git",
    "git://127.0.0.1:9418/ws.git",
    "ssh://git@github.com/a/b.git",
    "ssh://deploy-bot@git.example:2222/team/ws.git",
    "git+ssh://git@github.com/a/b.git",
    "git@github.com:a/b.git",
    "github.com:a/b.git",
    "file:///srv/git/ws.git",
]


@pytest.mark.parametrize("url", ACCEPTED_URLS)
def test_urls_without_credentials_are_kept_as_given(url: str) -> None:
    assert remotes.normalize(url) == url


REDACTED: list[tuple[str, str]] = [
    (f"https://{GH}@github.com/a/b.git", "https://***@github.com/a/b.git"),
    (f"https://{PLAIN}@github.com/a/b.git", "https://***@github.com/a/b.git"),
    (f"https://alice:{PLAIN}@github.com/a/b.git", "https://***@github.com/a/b.git"),
    (f"https://github.com/a/b.git?access_token={PLAIN}", "https://github.com/a/b.git?***"),
    (f"https://github.com/a/b.git#{PLAIN}", "https://github.com/a/b.git#***"),
    (
        f"could not fetch https://{PLAIN}@h.example/ws.git (HTTP 401); try again",
        "could not fetch https://***@h.example/ws.git (HTTP 401); try again",
    ),
    (f"ssh://git:{PLAIN}@github.com/a/b.git", "ssh://***@github.com/a/b.git"),
    (f"ssh://{GH}@github.com/a/b.git", "ssh://***@github.com/a/b.git"),
    (f"{GH}@github.com:a/b.git", "***@github.com:a/b.git"),
    ("ssh://git@github.com/a/b.git", "ssh://git@github.com/a/b.git"),
    ("git@github.com:a/b.git", "git@github.com:a/b.git"),
    ("http://127.0.0.1:8089/ws.git", "http://127.0.0.1:8089/ws.git"),
]


@pytest.mark.parametrize(("text", "shown"), REDACTED)
def test_redact_removes_every_credential_a_url_can_carry(text: str, shown: str) -> None:
    assert redact(text, []) == shown


def test_the_secrets_a_url_carries_are_listed_for_redaction() -> None:
    assert set(url_secrets(f"https://alice:{PLAIN}@h.example/ws.git?x={GH}")) >= {PLAIN, f"x={GH}"}
    assert url_secrets("ssh://git@github.com/a/b.git") == []
    assert url_secrets("https://github.com/a/b.git") == []


def entry(token: str) -> dict[str, str]:
    return {"username": "u", "token": token}


MATCHES: list[tuple[dict[str, object], str, str | None]] = [
    # (credentials table, remote URL, the token expected, or None)
    ({"http://127.0.0.1:80": entry("t")}, "http://127.0.0.1:8089/ws.git", None),
    ({"http://127.0.0.1:80": entry("t")}, "http://127.0.0.1/ws.git", "t"),
    ({"http://127.0.0.1": entry("t")}, "http://127.0.0.1:80/ws.git", "t"),
    ({"https://github.com": entry("t")}, "https://github.com.evil.example/a/b.git", None),
    ({"https://github.com": entry("t")}, "https://github.com:443/a/b.git", "t"),
    ({"https://github.com": entry("t")}, "http://github.com/a/b.git", None),
    ({"https://github.com": entry("t")}, "https://GitHub.com/a/b.git", "t"),
    ({"https://github.com/team": entry("t")}, "https://github.com/team-evil/b.git", None),
    ({"https://github.com/team": entry("t")}, "https://github.com/team/b.git", "t"),
    ({"https://github.com/team/": entry("t")}, "https://github.com/team/b.git", "t"),
    ({"https://github.com/team/b.git": entry("t")}, "https://github.com/team/b.git", "t"),
    ({"https://github.com/team/b": entry("t")}, "https://github.com/team/b.git", None),
    (
        {"https://git.example/": entry("t1"), "https://git.example/team/": entry("t2")},
        "https://git.example/team/ws.git",
        "t2",
    ),
    (
        {"https://git.example/team/": entry("t2"), "https://git.example": entry("t1")},
        "https://git.example/other/ws.git",
        "t1",
    ),
    ({"https://git.example/": {"username": "u"}}, "https://git.example/ws.git", None),
]


@pytest.mark.parametrize(("table", "url", "token"), MATCHES)
def test_credentials_match_by_origin_and_whole_path_segments(
    table: dict[str, object], url: str, token: str | None
) -> None:
    found = match(table, url)
    assert (found.token if found is not None else None) == token


def test_an_entry_that_is_not_an_http_url_is_named() -> None:
    with pytest.raises(SyncError, match="not an http"):
        match({"git.example/team": entry("t")}, "https://git.example/team/ws.git")


def test_redact_takes_linear_time_on_hostile_text() -> None:
    """A server's error text is redacted before it is printed: `a.a.a.…` before a `://`
    must not make the URL pattern try every start against every end (it took 10 s)."""
    import time

    started = time.monotonic()
    for text in ("a." * 20000 + " ://", "a-" * 20000 + "://x", "x://" + "@" * 40000):
        redact(text, [])
    assert time.monotonic() - started < 2
