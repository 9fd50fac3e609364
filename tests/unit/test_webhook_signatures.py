"""The webhook's signature checks (`service/core/gates/webhook.py`), pure: each host's scheme, the
published GitHub example, two secrets during a rotation, and what a verified push names."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from service.core.gates.webhook import Push, ignored, push_of, signature, verify

# GitHub's published example (docs: "Validating webhook deliveries")
GITHUB_SECRET = b"It's a Secret to Everybody"
GITHUB_BODY = b"Hello, World!"
GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
SECRET, OLD = b"the-current-secret", b"the-previous-secret"
BODY = b'{"ref": "refs/heads/main", "after": "' + b"a" * 40 + b'"}'


def hexmac(secret: bytes, body: bytes) -> str:
    return hmac.new(secret, body, hashlib.sha256).hexdigest()


def test_githubs_published_example_verifies() -> None:
    assert "sha256=" + signature(GITHUB_SECRET, GITHUB_BODY) == GITHUB_SIGNATURE
    delivery = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
    headers = {"x-hub-signature-256": GITHUB_SIGNATURE, "x-github-delivery": delivery}
    verdict = verify(headers, GITHUB_BODY, [GITHUB_SECRET])
    assert verdict.verified and verdict.host == "github"
    assert verdict.delivery == delivery


@pytest.mark.parametrize(
    "tamper",
    [
        lambda h, b: (h, b + b" "),  # one byte more in the body
        lambda h, b: ({**h, "x-hub-signature-256": h["x-hub-signature-256"][:-1] + "0"}, b),
        lambda h, b: ({**h, "x-hub-signature-256": h["x-hub-signature-256"].removeprefix("sha256=")}, b),
        lambda h, b: ({**h, "x-hub-signature-256": "sha1=" + "0" * 40}, b),
        lambda h, b: ({**h, "x-hub-signature-256": ""}, b),
    ],
)
def test_a_github_signature_that_does_not_match_is_refused(tamper: object) -> None:
    headers = {"x-hub-signature-256": GITHUB_SIGNATURE}
    h, b = tamper(headers, GITHUB_BODY)  # type: ignore[operator]
    assert verify(h, b, [GITHUB_SECRET]).reason == "bad-signature"


def test_the_wrong_secret_is_refused() -> None:
    headers = {"x-hub-signature-256": GITHUB_SIGNATURE}
    assert verify(headers, GITHUB_BODY, [b"another secret"]).reason == "bad-signature"


@pytest.mark.parametrize(("header", "delivery", "host"), [
    ("x-gitea-signature", "x-gitea-delivery", "gitea"),
    ("x-forgejo-signature", "x-forgejo-delivery", "forgejo"),
])  # fmt: skip
def test_gitea_and_forgejo_sign_the_body_in_plain_hex(header: str, delivery: str, host: str) -> None:
    headers = {header: hexmac(SECRET, BODY), delivery: "17"}
    verdict = verify(headers, BODY, [SECRET])
    assert (verdict.reason, verdict.host, verdict.delivery) == ("verified", host, "17")
    assert verify({header: "sha256=" + hexmac(SECRET, BODY)}, BODY, [SECRET]).reason == "bad-signature"
    assert verify({header: hexmac(SECRET, BODY + b"x")}, BODY, [SECRET]).reason == "bad-signature"


def test_forgejo_sending_giteas_headers_too_is_forgejo() -> None:
    good = hexmac(SECRET, BODY)
    headers = {"x-forgejo-signature": good, "x-gitea-signature": good, "x-forgejo-delivery": "9"}
    assert verify(headers, BODY, [SECRET]).host == "forgejo"


def test_gitlab_sends_the_secret_itself() -> None:
    headers = {"x-gitlab-token": SECRET.decode(), "x-gitlab-event-uuid": "u-1"}
    verdict = verify(headers, BODY, [SECRET])
    assert (verdict.reason, verdict.host, verdict.delivery) == ("verified", "gitlab", "u-1")
    assert verify({"x-gitlab-token": "guess"}, BODY, [SECRET]).reason == "bad-signature"
    assert verify({"x-gitlab-token": ""}, BODY, [SECRET]).reason == "bad-signature"


def test_two_secrets_during_a_rotation() -> None:
    for secret in (SECRET, OLD):
        headers = {"x-hub-signature-256": "sha256=" + hexmac(secret, BODY)}
        assert verify(headers, BODY, [SECRET, OLD]).verified
        assert verify({"x-gitlab-token": secret.decode()}, BODY, [SECRET, OLD]).verified
    retired = {"x-hub-signature-256": "sha256=" + hexmac(b"retired", BODY)}
    assert verify(retired, BODY, [SECRET, OLD]).reason == "bad-signature"


def test_no_signature_and_no_secret() -> None:
    assert verify({}, BODY, [SECRET]).reason == "unsigned"
    assert verify({"x-hub-signature-256": GITHUB_SIGNATURE}, GITHUB_BODY, []).reason == "no-secret"
    assert verify({}, BODY, []).reason == "no-secret"


def test_a_delivery_id_that_is_no_id_is_dropped() -> None:
    signed = {"x-hub-signature-256": "sha256=" + hexmac(SECRET, BODY)}
    for bad in ("", "   ", "x" * 129, "a\nb"):
        assert verify({**signed, "x-github-delivery": bad}, BODY, [SECRET]).delivery is None


def test_what_a_push_names() -> None:
    assert push_of(BODY) == Push("refs/heads/main", "a" * 40)
    assert push_of(b'{"zen": "Keep it logically awesome."}') == Push(None, None)  # a ping
    assert push_of(b'{"ref": 7, "after": null}') == Push(None, None)
    assert push_of(b"payload=%7B%7D") is None  # form-encoded: the hook must send JSON
    assert push_of(GITHUB_BODY) is None
    assert push_of(b"[1, 2]") is None


def test_which_pushes_need_no_fetch() -> None:
    mine = "b" * 40
    assert ignored(Push("refs/heads/main", "c" * 40), {mine}) is None
    assert ignored(Push("refs/heads/feature", "c" * 40), {mine}) == "other-branch"
    assert ignored(Push("refs/tags/v1", None), set()) == "other-branch"
    assert ignored(Push("refs/heads/main", mine), {mine}) == "own-push"
    assert ignored(Push(None, None), {mine}) is None  # says nothing: fetch
