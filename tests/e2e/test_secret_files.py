"""Secrets a real `self serve` reads from files, as container secrets are mounted: a webhook
secret from `VAR_FILE` signs deliveries as the variable would, and a configured remote whose
`VAR_FILE` cannot be read stops the start, naming the variable, before anything binds."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_serve_remote import (
    HOOK_ENV,
    SECRET,
    Backend,
    eventually,
    mirrored,
    push_body,
    seeded,
    signed,
)
from tests.support.selfrun import SELF, base_env
from tests.support.servers import free_port


@pytest.mark.slow
def test_a_webhook_signed_with_the_secret_in_var_file_is_accepted(tmp_path: Path, backend: Backend) -> None:
    cli = seeded(tmp_path, backend)
    mounted = tmp_path / "hook-secret"
    mounted.write_text(SECRET + "\n")
    from_file = {HOOK_ENV: "", HOOK_ENV + "_FILE": str(mounted)}  # the variable empty: the file serves
    with mirrored(tmp_path / "one", backend.url, env=from_file) as mirror:
        cli.run("goal", "a push signed with the mounted secret")
        cli.run("sync")
        body = push_body(cli.head())
        assert mirror.deliver(body, signed("github", body, "not-the-secret")).status_code == 401
        answer = mirror.deliver(body, signed("github", body))
        assert answer.status_code == 202, answer.text
        eventually(
            lambda: "a push signed with the mounted secret" in mirror.texts(), seconds=10, what="the push"
        )


def test_a_configured_remotes_unreadable_secret_file_stops_the_start(tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text(
        '[remotes.acme]\nurl = "git://127.0.0.1:9/acme.git"\nwebhook_secret_env = "ACME_HOOK_SECRET"\n'
    )
    data, port = tmp_path / "data", free_port()
    data.mkdir()
    env = base_env() | {"ACME_HOOK_SECRET_FILE": str(tmp_path / "absent")}
    args = [SELF, "serve", "--data", str(data), "--port", str(port), "--config", str(config)]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 2, proc.stderr
    assert f"remotes.acme: ACME_HOOK_SECRET_FILE={tmp_path / 'absent'} cannot be read" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    assert not (data / "backends").exists(), "nothing written from a refused start"


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[Backend]:
    found = Backend(tmp_path / "git")
    found.start()
    try:
        yield found
    finally:
        found.stop()
