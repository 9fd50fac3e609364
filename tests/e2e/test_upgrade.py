"""`self admin upgrade` on the kept data directory of format 0 (tests/fixtures/data-format0.tar.gz,
made by the release before formats: workspace acme, project web, user ann and a writer token,
four events by the CLI and over HTTP): a backup first, then format 1; run again, nothing; then a
real `self serve` serves the fixture's events and its token still in place."""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.support.kept import fixture_data
from tests.support.selfrun import base_env, describe, run_self
from tests.support.serving import Service, admin, token

FIXTURE_EVENTS = 4  # project.added web, a goal, a decision (the CLI), a goal (over HTTP)


def self_(*args: str) -> subprocess.CompletedProcess[str]:
    return run_self(args, base_env())


def upgrade(data: Path, backup: Path) -> str:
    proc = self_("admin", "upgrade", "--data", str(data), "--backup", str(backup))
    assert proc.returncode == 0, describe(proc)
    return proc.stdout


@pytest.mark.slow
def test_the_kept_format_0_data_directory_upgrades_and_serves(tmp_path: Path) -> None:
    data = fixture_data(tmp_path)
    said = upgrade(data, tmp_path / "before-upgrade.tar.gz")
    assert f"upgraded {data} from format 0 to 1" in said, said
    assert (data / "format").read_text() == "1\n"

    with tarfile.open(tmp_path / "before-upgrade.tar.gz") as tar:  # the backup made first
        member = tar.extractfile("manifest.json")
        assert member is not None
        manifest = json.loads(member.read())
    assert manifest["data_format"] == 0 and manifest["users"] == 1 and manifest["tokens"] == 1
    assert [(w["name"], w["counts"]["events"]) for w in manifest["workspaces"]] == [("acme", FIXTURE_EVENTS)]

    again = upgrade(data, tmp_path / "second.tar.gz")
    assert "is of format 1 already: nothing to upgrade" in again, again
    assert not (tmp_path / "second.tar.gz").exists(), "an upgrade with nothing to do made a backup"

    kept = json.loads(admin(data, "token", "list", "--json"))
    assert [(t["user"], t["workspace"], t["role"], t["revoked"]) for t in kept] == [
        ("ann", "acme", "writer", None)
    ]
    secret = token(data, "ann", "acme", "reader")
    service = Service(data, tmp_path / "serve.log")
    try:
        service.wait("/readyz")
        with service.client(secret) as client:
            rows = client.get("/api/v1/workspaces/acme/projects/web/state", params={"all": "1"}).json()
            texts = {row["text"] for row in rows}
            assert {"ship the web app", "use litestar", "a goal posted over HTTP"} <= texts, texts
    finally:
        assert service.stop() == 0


def test_an_upgrade_refuses_a_newer_data_directory(tmp_path: Path) -> None:
    data = fixture_data(tmp_path)
    (data / "format").write_text("7\n")
    proc = self_("admin", "upgrade", "--data", str(data), "--backup", str(tmp_path / "b.tar.gz"))
    assert proc.returncode == 1, describe(proc)
    assert "is of format 7, newer than this release reads (1)" in proc.stderr
    assert not (tmp_path / "b.tar.gz").exists()
