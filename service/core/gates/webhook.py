"""A git host's push delivery, judged without I/O: which host's scheme its headers use, whether
it carries a valid signature for one of the secrets, its delivery id, and what it names (the
branch, the new head).

- GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`, `X-GitHub-Delivery`.
- Forgejo and Gitea: `X-Forgejo-Signature` / `X-Gitea-Signature: <hex HMAC-SHA256 of the raw
  body>`, `X-Forgejo-Delivery` / `X-Gitea-Delivery` (Forgejo sends Gitea's headers too).
- GitLab: `X-Gitlab-Token: <the secret itself>`, `X-Gitlab-Event-UUID`.

Every comparison is `hmac.compare_digest`, against every secret given (two during a rotation),
so the time taken says nothing about how much of a signature was right.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Container, Iterable, Mapping, Sequence
from typing import Literal

import msgspec

BRANCH = "refs/heads/main"
MAX_DELIVERY_ID = 128  # characters of a delivery id kept; a longer one is not an id

Host = Literal["github", "forgejo", "gitea", "gitlab"]
Reason = Literal["verified", "unsigned", "bad-signature", "no-secret"]

# host, the header holding its HMAC (or GitLab's token), the prefix before the hex, the delivery id header
_SIGNED: tuple[tuple[Host, str, str, str], ...] = (
    ("github", "x-hub-signature-256", "sha256=", "x-github-delivery"),
    ("forgejo", "x-forgejo-signature", "", "x-forgejo-delivery"),
    ("gitea", "x-gitea-signature", "", "x-gitea-delivery"),
)
_GITLAB: tuple[Host, str, str] = ("gitlab", "x-gitlab-token", "x-gitlab-event-uuid")


class Verdict(msgspec.Struct, frozen=True):
    """What a delivery's headers and raw body prove. `host` is None when no header of any
    host's scheme is there; `delivery` is the host's delivery id (None: it sent none)."""

    reason: Reason
    host: Host | None = None
    delivery: str | None = None

    @property
    def verified(self) -> bool:
        return self.reason == "verified"


class Push(msgspec.Struct, frozen=True):
    """What a push delivery names: the ref pushed and the commit it now names (None when the
    payload does not say: a ping, another kind of event)."""

    ref: str | None = None
    after: str | None = None


def signature(secret: bytes, body: bytes) -> str:
    """The hex HMAC-SHA256 of `body` under `secret`: what GitHub, Gitea and Forgejo send."""
    return hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify(headers: Mapping[str, str], body: bytes, secrets: Sequence[bytes]) -> Verdict:
    """Judge a delivery: `headers` with lowercase names, `body` the raw bytes as received,
    `secrets` the ones accepted now (none: every delivery is refused as `no-secret`)."""
    for host, header, prefix, delivery_header in _SIGNED:
        given = headers.get(header)
        if given is not None:
            delivery = _delivery_id(headers.get(delivery_header))
            if not secrets:
                return Verdict("no-secret", host, delivery)
            ok = _hmac_matches(given, prefix, body, secrets)
            return Verdict("verified" if ok else "bad-signature", host, delivery)
    host, header, delivery_header = _GITLAB
    token = headers.get(header)
    if token is not None:
        delivery = _delivery_id(headers.get(delivery_header))
        if not secrets:
            return Verdict("no-secret", host, delivery)
        ok = _any(hmac.compare_digest(token.encode("utf-8", "replace"), s) for s in secrets)
        return Verdict("verified" if ok else "bad-signature", host, delivery)
    return Verdict("no-secret" if not secrets else "unsigned")


def _hmac_matches(given: str, prefix: str, body: bytes, secrets: Sequence[bytes]) -> bool:
    if not given.startswith(prefix):
        return False
    hex_given = given[len(prefix) :].strip().lower().encode("ascii", "replace")
    return _any(hmac.compare_digest(signature(s, body).encode("ascii"), hex_given) for s in secrets)


def _any(results: Iterable[bool]) -> bool:
    """`any` that looks at every result (no early exit: each secret is compared)."""
    found = False
    for result in results:
        found = found or result
    return found


def _delivery_id(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if not value or len(value) > MAX_DELIVERY_ID or not value.isprintable():
        return None
    return value


def push_of(body: bytes) -> Push | None:
    """The push a delivery's body names, read as a JSON object (the webhook's content type
    `application/json`); None when it is not one (a form-encoded body, say)."""
    try:
        document = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    if not isinstance(document, dict):
        return None
    ref, after = document.get("ref"), document.get("after")
    return Push(ref if isinstance(ref, str) else None, after if isinstance(after, str) else None)


def ignored(push: Push, own: Container[str], branch: str = BRANCH) -> str | None:
    """Why a verified delivery needs no fetch: `other-branch` (it names another ref), `own-push`
    (it names a commit this service pushed or holds); None: fetch."""
    if push.ref is not None and push.ref != branch:
        return "other-branch"
    if push.after is not None and push.after in own:
        return "own-push"
    return None
