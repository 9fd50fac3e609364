"""The intake gate's whole-segment fast path against its line-by-line check.

`segment_gate.unchecked` may only leave out a line that the full per-line check
(`intake._Intake._line`: caps, canonical bytes, id, log, payload struct, sanitize) accepts:
on random and adversarial events, every line it does not hand back passes that check, so the
gate with the fast path refuses exactly what it refused without it."""

from __future__ import annotations

from collections.abc import Callable

import msgspec
from hypothesis import HealthCheck, example, given
from hypothesis import strategies as st

from service.adapters.sync import intake
from service.core.events import ids
from service.core.gates import segment_gate
from tests.support.sizes import two_sizes

LOG = "app"
LOCAL = "/srv/checkouts/app"
_encoder = msgspec.json.Encoder(order="sorted")
# Pieces of text every sanitize rule looks for, and near misses of them.
FRAGMENTS = [
    "ghp_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "AKIA",
    "AIza",
    "sk-",
    "task-",
    "sk_live_",
    "npm_",
    "hf_",
    "SG.",
    "hvs.",
    "eyJ",
    "eyJhbGciOiJIUzI1NiJ9.",
    "@",
    "alice@",
    "@example.com",
    "git@host:",
    "=",
    "PATH=",
    "TOKEN=",
    "~",
    "~bob/",
    "~/",
    "/",
    "/home/",
    "/home/al",
    "/root",
    "/tmp/x",
    "/Users/",
    ":/",
    "C:/",
    "file:/",
    "https://",
    "user:pw@",
    "://",
    "token",
    "token:",
    'Token":',
    "password: ",
    "api_key': ",
    "key",
    "secret",
    "credentials :",
    "Bearer ",
    "bearer abc1234567890xyz",
    "Authorization: ",
    "-----BEGIN RSA PRIVATE KEY-----",
    "0123456789abcdef",
    "ABCDEFGHIJ",
    "abcdefghijklmnopqrstuvwxyz",
    "Zq8Xk2Lp9Rt5",
    "+/",
    "_",
    "-",
    ".",
    " ",
    "\t",
    ":",
    '"',
    "\\",
    "\n",
    "\r",
    "\x07",
    "\x7f",
    "\u202e",
    "\u200e",
    "é",
    "\u2028",
    LOCAL,
    "/srv/check",
    "ssh ",
    "localhost",
]
ALPHABET = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
texts = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(ALPHABET, max_size=40), st.text(max_size=4)), max_size=8
).map("".join)
KEYS = st.one_of(
    st.sampled_from(["text", "why", "commit", "note", "items", "count"]),
    st.sampled_from(
        [
            "text",
            "why",
            "commit",
            "sha",
            "labels",
            "note",
            "pid",
            "hostName",
            "api_key",
            "homepage",
            "envVars",
            "key",
            "tokens_per_char",
            "ssh_key",
            ":x",
            "a,",
            "x\u202e",
        ]
    ),
    texts,
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 10**20), st.floats(allow_nan=False), texts),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)
# True 15 times in 16 (hypothesis shrinks towards the first)
USUALLY = st.sampled_from([True] * 15 + [False])
ID = st.integers(0, 2**128 - 1).map(ids.encode)


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    event: dict[str, object] = {
        "id": draw(ID) if draw(USUALLY) else draw(texts),
        "ts": draw(st.one_of(st.just("2026-06-01T00:00:40.000Z"), texts)),
        "type": "note.custom" if draw(USUALLY) else draw(st.sampled_from(["entity.proposed", "run.started"])),
        "origin": {"actor": "agent", "confirmed": draw(st.booleans())},
        "project": LOG if draw(USUALLY) else "web",
    }
    if draw(st.booleans()):
        event["origin"]["by"] = draw(texts)  # type: ignore[index]
    if event["type"] == "entity.proposed" and draw(st.booleans()):
        payload: object = {
            "entity": draw(ID),
            "text": draw(texts),
            "labels": draw(st.lists(texts, max_size=3)),
        }
    else:
        payload = draw(st.dictionaries(KEYS, json_values, max_size=5))
    event["payload"] = payload
    if draw(st.integers(0, 3)) == 0:
        event["refs"] = draw(st.dictionaries(KEYS, json_values, max_size=3))
    line = _encoder.encode(event) + b"\n"
    spoil = 2 if draw(USUALLY) else draw(st.integers(0, 1))
    if spoil == 0:
        line = line.replace(b":", b": ", 1)  # not canonical
    elif spoil == 1:
        line = draw(st.sampled_from([b"<<<<<<< HEAD\n", b"=======\n", b"not json\n", b"[1]\n", b"{}\n"]))
    return line


def _full_check_passes(line: bytes, number: int, local: tuple[str, ...]) -> bool:
    gate = intake._Intake(None, "origin", frozenset(), local, history=False)  # type: ignore[arg-type]
    try:
        gate._line("projects/app/log/000000.jsonl", LOG, number, line)
    except intake.RemoteRefused:
        return False
    return True


CLEAN = (
    _encoder.encode(
        {
            "id": ids.encode(1 << 90),
            "ts": "2026-06-01T00:00:40.000Z",
            "type": "entity.proposed",
            "origin": {"actor": "agent", "confirmed": True},
            "project": LOG,
            "payload": {
                "entity": ids.encode(1 << 90),
                "text": "fold the ledger: see src/app.py",
                "labels": ["idea"],
            },
        }
    )
    + b"\n"
)


SHA = b"0f3a9c1e7b2d4f6a8c0e2b4d6f8a1c3e5b7d9f0a"
# nested deeper than sanitize.MAX_DEPTH, in a payload of a type with no struct
DEEP = CLEAN.replace(b"entity.proposed", b"note.custom").replace(b'["idea"]', b"[" * 70 + b"]" * 70)


def _fast_path_property() -> Callable[..., None]:
    @given(st.lists(lines(), min_size=1, max_size=6), st.booleans())
    @example([CLEAN, CLEAN.replace(b"src/app.py", b"/home/al/app.py")], False)
    @example([CLEAN, CLEAN.replace(b"src/app.py", LOCAL.encode() + b"/x")], True)
    @example([CLEAN.replace(b"src/app.py", b"token: s3cr3tvalue")], False)
    @example([CLEAN.replace(b"src/app.py", b"ghp_" + b"a1B2" * 6)], False)
    @example([CLEAN.replace(b'"labels"', b'"api_key"')], False)
    @example([CLEAN.replace(b"src/app.py", b"D:/data")], False)
    @example([CLEAN.replace(b"src/app.py", b"file:/x")], False)
    @example([CLEAN.replace(b"src/app.py", b"Q7hZ0pK3vX9mB2nR8tY4wL6cJ1dF5gH0sA3eU7iO")], False)
    @example([DEEP], False)
    @example([CLEAN.replace(b'"fold the ledger: see src/app.py"', b'"%s"' % SHA)], False)
    @example([CLEAN.replace(b'"text":"fold the ledger: see src/app.py"', b'"sha":"%s"' % SHA)], False)
    @example([CLEAN.replace(b'"text":"fold the ledger: see src/app.py"', b'"xsha":"%s"' % SHA)], False)
    def test_a_line_the_fast_path_leaves_out_passes_the_full_check(
        segment: list[bytes], with_local: bool
    ) -> None:
        local = (LOCAL,) if with_local else ()
        todo = segment_gate.unchecked(segment, LOG, local)
        if todo is None:
            return  # every line takes the full check
        for index, line in enumerate(segment):
            if index not in todo:
                assert _full_check_passes(line, index + 1, local), line

    return test_a_line_the_fast_path_leaves_out_passes_the_full_check


_SIZES = two_sizes(
    _fast_path_property, few=40, many=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_a_line_the_fast_path_leaves_out_passes_the_full_check_in_few_examples = _SIZES[0]
test_a_line_the_fast_path_leaves_out_passes_the_full_check = _SIZES[1]


def test_a_segment_of_clean_events_needs_no_line_checked() -> None:
    segment = [CLEAN] * 3
    assert all(_full_check_passes(line, 1, ()) for line in segment)
    assert segment_gate.unchecked(segment, LOG, ()) == set()


def test_a_full_sha_under_a_commit_key_needs_no_check_and_elsewhere_does() -> None:
    under_commit = CLEAN.replace(b'"text":"fold the ledger: see src/app.py"', b'"sha":"%s"' % SHA)
    under_text = CLEAN.replace(b'"fold the ledger: see src/app.py"', b'"%s"' % SHA)
    assert _full_check_passes(under_commit, 1, ()) and not _full_check_passes(under_text, 2, ())
    assert segment_gate.unchecked([under_commit, under_text], LOG, ()) == {1}


def test_a_line_nested_too_deep_is_handed_back() -> None:
    assert not _full_check_passes(DEEP, 1, ())
    assert segment_gate.unchecked([DEEP], LOG, ()) == {0}


def test_an_unclean_line_is_handed_back() -> None:
    dirty = CLEAN.replace(b"src/app.py", b"alice@example.com")
    assert not _full_check_passes(dirty, 2, ())
    assert segment_gate.unchecked([CLEAN, dirty, CLEAN], LOG, ()) == {1}
