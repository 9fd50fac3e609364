"""A signed push delivery replayed — under a new delivery id, with none, or dressed in another
host's headers — is answered 409 without a second fetch: the service keeps the deliveries it
accepted in the last minutes by what they signed (a real `self serve` mirroring a bare
repository served by `git daemon`)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.e2e.test_serve_remote import (
    PROBLEM,
    Backend,
    backend,  # noqa: F401 (the fixture)
    eventually,
    mirrored,
    push_body,
    seeded,
    signed,
)


@pytest.mark.slow  # a mirror, its backend under git daemon, two syncs: about 10 s
def test_a_replayed_body_is_409_and_fetches_nothing(tmp_path: Path, backend: Backend) -> None:  # noqa: F811
    cli = seeded(tmp_path, backend)
    with mirrored(tmp_path / "one", backend.url) as mirror:
        cli.run("goal", "pushed once")
        cli.run("sync")
        body = push_body(cli.head())
        first = mirror.deliver(body, signed("github", body, delivery="delivery-one"))
        assert first.status_code == 202, first.text
        eventually(lambda: mirror.syncs("webhook") >= 1, what="the first delivery's fetch")
        time.sleep(0.5)
        fetched = mirror.syncs("webhook")
        no_id = {k: v for k, v in signed("github", body).items() if k != "X-GitHub-Delivery"}
        replays = {
            "a new delivery id": signed("github", body, delivery="delivery-two"),
            "no delivery id": no_id,
            "another host's headers": signed("gitea", body, delivery="delivery-three"),
        }
        for name, headers in replays.items():
            answer = mirror.deliver(body, headers)
            assert answer.status_code == 409, f"{name}: {answer.status_code} {answer.text}"
            assert answer.headers["content-type"] == PROBLEM
            assert answer.json()["code"] == "webhook-replayed", name
        time.sleep(1.0)
        assert mirror.syncs("webhook") == fetched, "a replay fetched again"
        assert len(mirror.events("webhook-replayed")) == len(replays)
        cli.run("goal", "pushed twice")
        cli.run("sync")
        fresh = push_body(cli.head())
        assert mirror.deliver(fresh, signed("github", fresh)).status_code == 202, "a new push is taken"
