"""The sanitize gate: what it refuses, what it lets through, and what its refusals say."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.core.errors import Invalid, Refused
from service.core.gates.sanitize import (
    Unsanitary,
    check,
    check_event,
    check_strings,
    key_fact,
    value_fact,
)
from service.core.gates.secret_formats import mask_tokens, token_fact
from tests.support.samples import SUPERSELF_SAMPLE_LOG as SAMPLE_LOG

GH_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2  # 44 characters, the shape of a real one
SHA = "9d2f4fc49cf782c5268b31a2e0bb8740a684c3b5"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)


def event(payload: dict[str, Any] | None = None, refs: dict[str, Any] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": "01m8ny7a5xmafzabq8vmzp4gbb",
        "ts": "2026-11-30T09:57:49.885Z",
        "type": "report.added",
        "origin": {"actor": "agent", "confirmed": False, "session": "s-1"},
        "project": "app",
        "payload": payload if payload is not None else {"text": "merge written; tests green"},
    }
    if refs is not None:
        data["refs"] = refs
    return data


def refusal(data: dict[str, Any]) -> Unsanitary:
    with pytest.raises(Unsanitary) as caught:
        check_event(data)
    return caught.value


# --- refused values --------------------------------------------------------------------

REFUSED_TEXT: list[tuple[str, str, str]] = [
    # (label, the offending text, a word the kind must contain)
    ("home path", "log at /home/alice/src/app/out.txt", "path"),
    ("macOS home", "/Users/bob/work/app", "path"),
    ("root home", "keys in /root/.ssh", "path"),
    ("root alone", "ran as /root", "path"),
    ("windows home", "C:\\Users\\bob\\app", "path"),
    ("windows drive", "built in d:/work/repo", "path"),
    ("tilde user", "copied to ~bob/tmp", "path"),
    ("private tmp", "wrote /tmp/pytest-of-alice/out", "path"),
    ("macOS tmp", "/var/folders/xy/T/tmp1234/file", "path"),
    ("file url", "open file:///etc/hosts", "path"),
    ("unc share", "\\\\fileserver\\share\\x", "path"),
    ("email", "ask alice@example.com about it", "email"),
    ("scp remote", "pushed to git@github.com:org/repo.git", "user@host"),
    ("shell prompt", "alice@laptop:~/src$ make", "user@host"),
    ("ssh", "ssh deploy@buildbox and restart", "user@host"),
    ("localhost user", "bob@localhost", "user@host"),
    ("github classic", f"use {GH_TOKEN} for the push", "GitHub"),
    ("github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "GitHub"),
    ("github oauth", "gho_" + "Zz9" * 12, "GitHub"),
    ("gitlab", "glpat-abcdefghij0123456789", "GitLab"),
    ("slack bot", "xoxb-123456789012-abcdefghijkl", "Slack"),
    ("slack user", "xoxp-123456789012-1234567890-abcdef", "Slack"),
    ("aws key id", "AKIAIOSFODNN7EXAMPLE", "AWS"),
    ("openai", "sk-proj-abcdefghijklmnop1234", "secret key"),
    ("anthropic", "sk-ant-api03-abcdefghijklmnop1234", "secret key"),
    ("stripe", "sk_live_" + "a1B2" * 6, "Stripe"),
    ("google", "AIza" + "a1B2c3D4e5" * 3 + "f6G7h", "Google"),
    ("npm", "npm_" + "a1B2" * 9, "npm"),
    ("jwt", f"session {JWT}", "web token"),
    ("pem", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n", "private key"),
    ("pem rsa", "-----BEGIN RSA PRIVATE KEY-----", "private key"),
    ("bearer", "curl with Bearer abc123def456ghi789jkl", "bearer"),
    ("auth header", "Authorization: Basic dXNlcjpwYXNz", "authorization"),
    ("url password", "https://alice:hunter2@example.com/repo.git", "URL"),
    ("url token", f"https://{SHA}@github.com/org/repo", "URL"),
    ("long hex", "0123456789abcdef0123456789abcdef", "high-entropy"),
    ("sha outside commit", f"reverted {SHA}", "high-entropy"),
    ("base64 secret", "k9Xz2Qw7Lm4Rt8Vb1Nc6Hj3Pd5Sf0GaE", "high-entropy"),
    ("env dump", "PATH=/usr/local/bin:/usr/bin\nLANG=C.UTF-8\nTERM=xterm", "environment"),
    ("env lines", "A_ONE=1\nB_TWO=2\nC_THREE=3", "environment"),
    ("path var", "ran with PATH=/opt/bin", "environment"),
    ("home var", "HOME=/srv/x make", "environment"),
    ("secret assignment", "GITHUB_TOKEN=abc123", "credential"),
    ("password assignment", "password=hunter2", "credential"),
    ("json secret", '{"api_key": "abcd1234"}', "credential"),
    ("yaml password", "db password: hunter2!", "credential"),
    ("bell", "done\x07", "control"),
    ("escape", "\x1b[31mred\x1b[0m", "control"),
    ("carriage return", "line\r\n", "control"),
    ("nul", "a\x00b", "control"),
    ("del", "a\x7fb", "control"),
    ("c1", "a\x85b", "control"),
    ("bidi override", "approve \u202egnp.exe", "bidirectional"),
    ("bidi isolate", "a\u2067b\u2069c", "bidirectional"),
    ("concrete home in prose", "hooks live in /home/alice/.claude/settings.json", "path"),
    ("huggingface", "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH", "Hugging Face"),
    ("docker hub", "dckr_pat_" + "a1B2c3D4e5F6g7H8i9J0k1L2", "Docker"),
    ("selfhub token", "shb_" + "CFkBDfoDORGIFUkfT6LlPtjbEwiPnDLOVhMWZkwxvax", "selfhub API token"),
    ("secret-word prefix", "key_k9Xz2Qw7Lm4Rt8Vb1Nc6Hj3Pd5Sf0GaE", "likely secret"),
]


@pytest.mark.parametrize(("label", "text", "kind"), REFUSED_TEXT, ids=[r[0] for r in REFUSED_TEXT])
def test_refused_text_names_the_path_and_kind_and_hides_the_value(label: str, text: str, kind: str) -> None:
    error = refusal(event({"text": "fine", "notes": ["ok", text]}))
    message = str(error)
    assert "payload.notes[1]" in message
    assert kind.lower() in message.lower()
    assert text not in message
    assert text.strip() not in message
    assert error.findings == (("payload.notes[1]", error.findings[0][1]),)
    assert isinstance(error, Refused)


REFUSED_KEYS: list[tuple[dict[str, Any], str, object]] = [
    # (refs, the path the message names, the value that must not appear)
    ({"pid": 31337}, "refs.pid", 31337),
    ({"ppid": 4242}, "refs.ppid", 4242),
    ({"process_id": 5151}, "refs.process_id", 5151),
    ({"processId": 5252}, "refs.processId", 5252),
    ({"worker_pid": 5353}, "refs.worker_pid", 5353),
    ({"cwd": "/srv/app"}, "refs.cwd", "/srv/app"),
    ({"working_directory": "srv/app"}, "refs.working_directory", "srv/app"),
    ({"home": "srv/alice"}, "refs.home", "srv/alice"),
    ({"hostname": "buildbox-7"}, "refs.hostname", "buildbox-7"),
    ({"host": "buildbox-8"}, "refs.host", "buildbox-8"),
    ({"env": {"HOME": "x", "LANG": "C"}}, "refs.env", "LANG"),
    ({"environ": ["A=1"]}, "refs.environ", "A=1"),
    ({"password": "hunter2"}, "refs.password", "hunter2"),
    ({"client_secret": "s3cr3t"}, "refs.client_secret", "s3cr3t"),
    ({"token": "abc"}, "refs.token", "abc"),
    ({"access_token": "abcd"}, "refs.access_token", "abcd"),
    ({"api_key": "k-1"}, "refs.api_key", "k-1"),
    ({"apiKey": "k-2"}, "refs.apiKey", "k-2"),
    ({"apikey": "k-3"}, "refs.apikey", "k-3"),
    ({"credentials": {"user": "u"}}, "refs.credentials", "user"),
    ({"private_key": "k-4"}, "refs.private_key", "k-4"),
    ({"Authorization": "Basic abc"}, "refs.Authorization", "Basic abc"),
    ({"cookie": "sid=1"}, "refs.cookie", "sid=1"),
    ({"stderr": "Traceback"}, "refs.stderr", "Traceback"),
    ({"nested": {"deeper": [{"pid": 99887}]}}, "refs.nested.deeper[0].pid", 99887),
]


@pytest.mark.parametrize(("refs", "path", "value"), REFUSED_KEYS, ids=[r[1] for r in REFUSED_KEYS])
def test_refused_keys(refs: dict[str, Any], path: str, value: object) -> None:
    error = refusal(event(refs=refs))
    assert path in str(error)
    assert str(value) not in str(error)
    assert [p for p, _ in error.findings] == [path]


def test_a_key_that_is_itself_a_secret_is_not_printed() -> None:
    error = refusal(event({"text": "ok", "meta": {GH_TOKEN: "x"}}))
    assert GH_TOKEN not in str(error)
    assert "payload.meta.<key>" in str(error)


def test_every_finding_is_reported() -> None:
    error = refusal(event({"text": "mail bob@example.com"}, refs={"pid": 1, "branch": "main"}))
    assert [p for p, _ in error.findings] == ["payload.text", "refs.pid"]
    assert "bob@example.com" not in str(error)


def test_local_strings_the_shell_passes_are_refused() -> None:
    data = event({"text": "built in /srv/checkouts/app-7 today"})
    check_event(data)
    with pytest.raises(Unsanitary) as caught:
        check_event(data, local=["/srv/checkouts/app-7", "ab"])
    assert "payload.text" in str(caught.value)
    assert "/srv/checkouts" not in str(caught.value)


def test_check_names_the_given_path() -> None:
    with pytest.raises(Unsanitary, match=r"payload\.text"):
        check("token ghp_" + "x1" * 20, "payload.text")
    with pytest.raises(Unsanitary, match=r"payload\[2\]"):
        check(["a", "b", "alice@example.com"], "payload")
    check({"text": "fine"}, "payload")


def test_non_json_values_are_invalid() -> None:
    with pytest.raises(Invalid):
        check_event(event({"text": b"bytes"}))
    with pytest.raises(Invalid):
        check_event(event({"text": {1: "int key"}}))
    deep: Any = "x"
    for _ in range(100):
        deep = [deep]
    with pytest.raises(Invalid, match="nested deeper"):
        check_event(event({"text": deep}))


# --- accepted values -------------------------------------------------------------------

ACCEPTED_TEXT = [
    "merge written; tests green",
    "write the docs",
    "ship the sync beta (target 2099-03-31)",
    "src/app.py",
    "docs/README.md and ../shared/notes.md",
    "POST /api/v1/projects/{slug}/events",
    "the /etc/hosts file and /usr/bin/env",
    "https://github.com/org/repo/pull/1234",
    f"https://github.com/org/repo/commit/{SHA}",
    "uses actions/checkout@v4 and react@18.2.0",
    "@alice please review",
    "max_tokens=4096 and tokens_per_char=0.25",
    "set FOO=1 in CI",
    "FOO=1\nBAR=2",
    "ratio 1/2 = 0.5",
    "~50/100 done",
    "password: required on first login",
    "the token: none yet",
    "Basic internationalization",
    "Bearer tokens are used for the API",
    "key decisions: merge with union",
    "risk-assessment-for-the-2026-rollout",
    "test_concurrent_append_is_idempotent_under_retry2",
    "tests/unit/test_fold_properties_v2_with_many_cases.py",
    "MPSGraphConvolution2DOpDescriptor",
    "BSD-3-Clause-No-Nuclear-License-2014",
    "session 3f1c2a9e-1b2c-4d5e-8f90-123456789abc",
    "01m8ny75fdy93k3mh0rjgk54hg",
    "2026-11-30T09:57:45.069Z",
    "line one\n\tindented line two",
    "naïve café — 東京 ✓ 🚀",
    "HEAD",
    "hooks live in ~/.claude/settings.json",
    "see ~/src/app/notes.md and ~/.config/selfhub/credentials",
    "session_01RR19nj3Epadxj44kZZsgTF",
    "resumed session_01RR19nj3Epadxj44kZZsgTF after the crash",
    "transcripts/session_01RR19nj3Epadxj44kZZsgTF/turn-3.json",
    "msg_01XFDUDYJgAACzvnptvVoYEL7aQ2 and toolu_01A09q90qw90lq917835lq9Xz",
    "approve \u200fשלום\u200e ok",
]


@pytest.mark.parametrize("text", ACCEPTED_TEXT)
def test_accepted_text(text: str) -> None:
    check_event(event({"text": text}))


ACCEPTED_KEYS = [
    "branch",
    "work",
    "code",
    "commit",
    "entity",
    "session",
    "by",
    "labels",
    "links",
    "criteria",
    "criterion",
    "exposure",
    "scope",
    "priority",
    "why",
    "target",
    "notes",
    "pair",
    "on",
    "slug",
    "description",
    "artifact",
    "tokens",
    "tokens_per_char",
    "full_tokens",
    "max_tokens",
    "token_count",
    "key",
    "keys",
    "sort_key",
    "homepage",
    "environment",
    "author",
    "rapid",
    "state_machine",
    "horizon",
    "success",
    "stop",
    "after",
    "title",
    "outcome",
    "reason",
]


@pytest.mark.parametrize("key", ACCEPTED_KEYS)
def test_accepted_keys(key: str) -> None:
    assert key_fact(key) is None
    check_event(event({"text": "ok", key: "fine"}))


def test_a_commit_sha_passes_under_a_commit_key_only() -> None:
    check_event(event({"text": "merged", "commit": SHA}))
    check_event(event({"text": "merged", "commits": [SHA, "a" * 64]}))
    with pytest.raises(Unsanitary, match=r"payload\.artifact"):
        check_event(event({"text": "merged", "artifact": SHA}))
    with pytest.raises(Unsanitary, match=r"payload\.commit"):
        check_event(event({"text": "merged", "commit": GH_TOKEN}))


def test_the_superself_sample_log_passes() -> None:
    for line in SAMPLE_LOG.read_text().splitlines():
        check_event(json.loads(line))


def test_value_fact_fast_path_agrees_with_the_walk() -> None:
    for word in ("agent", "goal", "01m8ny75fdy93k3mh0rjgk54hg", "AKIAIOSFODNN7EXAMPLE"):
        verdict = value_fact(word)
        try:
            check_event(event({"text": word}))
            assert verdict is None
        except Unsanitary:
            assert verdict is not None


# --- properties ------------------------------------------------------------------------

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Words of letters and digits from any script, at most ten long, between separators that
# each carry a space: no token, path, address, assignment or long run can form.
# Words that name a secret ("PASSWD", "token") make "PASSWD: 000000" a credential assignment;
# a word ending in "Bearer" makes what follows it a bearer token.
WORD = st.text(st.characters(categories=("L", "Nd")), min_size=1, max_size=10).filter(
    lambda w: key_fact(w) is None and value_fact(f"{w}: 000000") is None and "earer" not in w
)
SEPARATOR = st.sampled_from([" ", ", ", "; ", ". ", "! ", "? ", " (", ") ", ": ", " - ", "\n", "\t"])


@st.composite
def prose(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORD, min_size=1, max_size=12))
    out = words[0]
    for word in words[1:]:
        out += draw(SEPARATOR) + word
    return out


KEY = st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True).filter(lambda k: key_fact(k) is None)
JSON_LEAF = st.one_of(prose(), st.integers(), st.booleans(), st.none())
NESTED = st.recursive(
    st.dictionaries(KEY, JSON_LEAF, max_size=4),
    lambda inner: st.dictionaries(KEY, inner | st.lists(inner | JSON_LEAF, max_size=3), max_size=4),
    max_leaves=12,
)


@PROPERTY
@given(payload=NESTED, refs=st.dictionaries(KEY, prose(), max_size=3))
def test_prose_without_secrets_passes(payload: dict[str, Any], refs: dict[str, Any]) -> None:
    check_event(event(payload, refs))


SECRETS = st.one_of(
    st.text("abcdefABCDEF0123456789", min_size=36, max_size=36).map(lambda s: "ghp_" + s),
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", min_size=16, max_size=16).map(lambda s: "AKIA" + s),
    st.text("abcdefghijk012345", min_size=20, max_size=30).map(lambda s: "glpat-" + s),
    st.text("0123456789", min_size=12, max_size=12).map(lambda s: f"xoxb-{s}-{s}"),
    st.from_regex(r"[a-z]{1,8}(\.[a-z]{1,8})?@[a-z]{2,10}\.(com|org|io|dev)", fullmatch=True),
    st.from_regex(r"/(home|Users)/[a-z]{2,8}/[a-z]{1,8}", fullmatch=True),
    st.text("0123456789abcdef", min_size=40, max_size=40).filter(
        lambda s: any(c.isalpha() for c in s) and any(c.isdigit() for c in s)
    ),
    st.just("-----BEGIN PRIVATE KEY-----"),
    st.just(JWT),
)


def leaf_paths(value: Any, path: str) -> list[str]:
    if isinstance(value, str):
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in leaf_paths(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in leaf_paths(v, f"{path}[{i}]")]
    return []


def replace_at(value: Any, path: str, root: str, new: str) -> Any:
    if path == root:
        return new
    if isinstance(value, dict):
        return {k: replace_at(v, path, f"{root}.{k}", new) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_at(v, path, f"{root}[{i}]", new) for i, v in enumerate(value)]
    return value


@PROPERTY
@given(data=st.data(), payload=NESTED, secret=SECRETS, before=prose(), after=prose())
def test_a_secret_anywhere_is_caught_at_its_path(
    data: st.DataObject, payload: dict[str, Any], secret: str, before: str, after: str
) -> None:
    paths = leaf_paths(payload, "payload")
    if not paths:
        payload = {**payload, "text": "x"}
        paths = ["payload.text"]
    path = data.draw(st.sampled_from(paths))
    planted = replace_at(payload, path, "payload", f"{before} {secret} {after}")
    with pytest.raises(Unsanitary) as caught:
        check_event(event(planted))
    message = str(caught.value)
    assert [p for p, _ in caught.value.findings] == [path]
    assert path in message
    assert secret not in message


# --- what a refusal calls a control character ---------------------------------------------


@pytest.mark.parametrize("text", ["done\x07", "\x1b[31mred", "line\r\n", "a\u202eb"])
def test_a_control_character_is_called_one_and_not_a_secret(text: str) -> None:
    message = str(refusal(event({"text": text})))
    assert "control character" in message and "U+" in message
    assert "secret" not in message and "machine-local" not in message
    assert text not in message


def test_a_key_holding_a_control_character_says_so() -> None:
    message = str(refusal(event({"text": "ok", "meta": {"bad\x07key": "x"}})))
    assert "payload.meta.<key>" in message and "control character (U+0007)" in message
    assert "secret" not in message


def test_a_refusal_of_both_kinds_gives_both_advices() -> None:
    message = str(refusal(event({"text": "bell\x07", "note": "mail bob@example.com"})))
    assert "control character" in message and "machine-local" in message


# --- machine-independent text passes, concrete homes do not --------------------------------

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefghjkmnpqrstvwxyz"
ULID_LIKE = st.builds(
    lambda head, body: head + body,
    st.sampled_from("01234567"),
    st.text(CROCKFORD, min_size=23, max_size=31),
)
ID_PREFIX = st.sampled_from(["session_", "msg_", "toolu_", "req_", "run_", "evt-"])
# Path segments of words: a segment of random letters and digits is a random run, refused
# wherever it stands (see the hex and base64 cases above).
SEGMENT = st.text("abcdefghijklmnopqrstuvwxyz._-", min_size=1, max_size=12)
HOME_NAME = st.from_regex(r"[a-z_][a-z0-9_-]{0,15}", fullmatch=True)


@PROPERTY
@given(prefix=ID_PREFIX, ulid=ULID_LIKE, before=prose(), after=prose())
def test_a_prefixed_ulid_like_id_passes(prefix: str, ulid: str, before: str, after: str) -> None:
    check_event(event({"text": f"{before} {prefix}{ulid} {after}", "session": f"session_{ulid}"}))


@PROPERTY
@given(segments=st.lists(SEGMENT, min_size=1, max_size=5), before=prose(), after=prose())
def test_a_path_under_tilde_passes(segments: list[str], before: str, after: str) -> None:
    check_event(event({"text": f"{before} ~/{'/'.join(segments)} {after}", "file": "~/" + segments[0]}))


@PROPERTY
@given(
    name=HOME_NAME,
    segments=st.lists(SEGMENT, max_size=4),
    home=st.sampled_from(["/home/{}/", "/Users/{}/", "C:\\Users\\{}\\"]),
    before=prose(),
)
def test_a_concrete_home_path_is_refused(name: str, segments: list[str], home: str, before: str) -> None:
    separator = "\\" if home.startswith("C:") else "/"
    path = home.format(name) + separator.join(segments)
    with pytest.raises(Unsanitary) as caught:
        check_event(event({"text": f"{before} {path}"}))
    assert caught.value.findings == (("payload.text", "holds an absolute machine-local path"),)
    assert path not in str(caught.value)


# --- every string of a settings document -------------------------------------------------


def test_check_strings_judges_keys_and_values_but_not_key_names() -> None:
    check_strings({"aliases": {"secret": {"label": "host"}, "env": {"label": "pid"}}}, "workspace.json")
    with pytest.raises(Unsanitary) as caught:
        check_strings(
            {
                "aliases": {GH_TOKEN: {"label": "work"}, "lab": {"label": "/home/alice/x"}},
                "removed": ["a\x07"],
            },
            "workspace.json",
        )
    assert [p for p, _ in caught.value.findings] == [
        "workspace.json.aliases.<key>",
        "workspace.json.aliases.lab.label",
        "workspace.json.removed[0]",
    ]
    assert GH_TOKEN not in str(caught.value) and "/home/alice" not in str(caught.value)
    with pytest.raises(Unsanitary, match=r"workspace\.json\.note"):
        check_strings({"note": "built in /srv/ck/app"}, "workspace.json", local=["/srv/ck/app"])


# --- token formats, for the URL checks and the redaction of printed text --------------------

TOKEN_TEXTS = [
    (GH_TOKEN, "GitHub"),
    ("glpat-abcdefghij0123456789", "GitLab"),
    ("xoxb-123456789012-abcdefghijkl", "Slack"),
    ("AKIAIOSFODNN7EXAMPLE", "AWS"),
    ("sk-ant-api03-abcdefghijklmnop1234", "secret key"),
    (JWT, "web token"),
]


@pytest.mark.parametrize(("token", "kind"), TOKEN_TEXTS, ids=[k for _, k in TOKEN_TEXTS])
def test_token_fact_and_mask_tokens(token: str, kind: str) -> None:
    fact = token_fact(f"https://{token}@git.example/team/ws.git")
    assert fact is not None and kind.lower() in fact.lower()
    masked = mask_tokens(f"could not fetch https://{token}@git.example/ws.git: refused")
    assert token not in masked and masked == "could not fetch https://***@git.example/ws.git: refused"


def test_token_fact_passes_ordinary_urls_and_paths() -> None:
    for text in (
        "https://github.com/org/repo.git",
        "git@github.com:org/repo.git",
        "/home/alice/ws.git",
        "ssh://git@host/x",
    ):
        assert token_fact(text) is None
        assert mask_tokens(text) == text
