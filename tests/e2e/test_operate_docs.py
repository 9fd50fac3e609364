"""docs/operate.md's own blocks run as written: Backup while a real `self serve` runs on the data
directory, then Restore; Upgrade on the kept data directory of format 0."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.e2e.test_docs import run_lines, sh_lines
from tests.support.kept import fixture_data
from tests.support.selfrun import REPO, base_env, describe, run_self
from tests.support.serving import Service, admin

OPERATE = REPO / "docs" / "operate.md"


@pytest.mark.slow
def test_the_backup_and_restore_blocks_run_while_the_service_serves(tmp_path: Path) -> None:
    data = tmp_path / "team-data"
    admin(data, "workspace", "add", "acme")
    admin(data, "user", "add", "ann")
    env = base_env() | {"SELF_WORKSPACE": str(data / "workspaces" / "acme"), "SELF_PROJECT": "web"}
    for args in (("project", "add", "web"), ("goal", "ship the first page")):
        proc = run_self(args, env)
        assert proc.returncode == 0, describe(proc)
    service = Service(data, tmp_path / "serve.log")
    try:
        backup, restore = sh_lines(OPERATE, "Backup"), sh_lines(OPERATE, "Restore")
        outputs = run_lines(tmp_path, backup + restore)
    finally:
        assert service.stop() == 0
    made = outputs[len(backup) - 1]
    assert "acme: main " in made and "2 events" in made, made
    assert outputs[len(backup) + len(restore) - 1].split() == ["acme"]
    assert (tmp_path / "restored-data" / "format").read_text() == "1\n"


def test_the_upgrade_block_runs_on_the_kept_format_0_data_directory(tmp_path: Path) -> None:
    shutil.move(fixture_data(tmp_path / "kept"), tmp_path / "team-data")
    (tmp_path / "backups").mkdir()
    lines = sh_lines(OPERATE, "Upgrade")
    said = run_lines(tmp_path, lines)[len(lines) - 1]
    assert "from format 0 to 1; the backup made first:" in said, said
    assert len(list((tmp_path / "backups").glob("before-upgrade-*.tar.gz"))) == 1
