"""deploy/k8s/backup/: the claim, the backup CronJob, the upgrade and restore Jobs, strictly valid
Kubernetes objects that mount the StatefulSet's claim for DATA; and their scripts (and the
compose roll back of docs/operate.md) run here by sh with the real `self`, their paths moved
into a temporary folder: a backup made and the old ones deleted, the kept format-0 data
directory upgraded, then rolled back to the backup the upgrade made."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes_validate import utils as k8s

from tests.e2e.test_docs import section
from tests.support.kept import fixture_data
from tests.support.selfrun import REPO, base_env
from tests.unit.test_deploy_manifests import UID, documents, kind, versions

BACKUP = REPO / "deploy" / "k8s" / "backup"
OPERATE = REPO / "docs" / "operate.md"


def manifest(name: str) -> dict[str, Any]:
    (doc,) = documents(BACKUP / name)
    return doc


def pod_of(doc: dict[str, Any]) -> dict[str, Any]:
    spec = doc["spec"]["jobTemplate"]["spec"] if doc["kind"] == "CronJob" else doc["spec"]
    pod: dict[str, Any] = spec["template"]["spec"]
    return pod


def script(name: str) -> str:
    (box,) = pod_of(manifest(name))["containers"]
    assert box["command"][:2] == ["sh", "-c"]
    return str(box["command"][2])


def test_the_backup_manifests_are_valid_kubernetes_objects() -> None:
    listed = documents(BACKUP / "kustomization.yaml")[0]["resources"]
    assert set(listed) == {"claim.yaml", "cronjob.yaml"}
    names = sorted(p.name for p in BACKUP.glob("*.yaml") if p.name != "kustomization.yaml")
    for version in versions():
        for name in names:
            k8s.validate(manifest(name), version, strict=True)


@pytest.mark.parametrize("name", ["cronjob.yaml", "upgrade-job.yaml", "restore-job.yaml"])
def test_each_job_mounts_data_and_the_backups_as_the_service_runs(name: str) -> None:
    statefulset = kind("StatefulSet")
    template = statefulset["spec"]["volumeClaimTemplates"][0]["metadata"]["name"]
    claim = f"{template}-{statefulset['metadata']['name']}-0"  # the claim of its pod 0
    pod = pod_of(manifest(name))
    claims = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]}
    assert claims == {"data": claim, "backups": manifest("claim.yaml")["metadata"]["name"]}
    (box,) = pod["containers"]
    assert {m["mountPath"] for m in box["volumeMounts"]} == {"/data", "/backups"}
    assert pod["securityContext"]["runAsUser"] == UID and box["securityContext"]["readOnlyRootFilesystem"]
    if name == "cronjob.yaml":  # DATA's claim is ReadWriteOnce: on the service pod's node
        (term,) = pod["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert term["labelSelector"]["matchLabels"] == statefulset["spec"]["selector"]["matchLabels"]


def run(text: str, root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`text` by sh, its /data and /backups moved under `root`."""
    moved = re.sub(r"(?<![\w/.])/(data|backups)\b", lambda m: f"{root}/{m[1]}", text)
    return subprocess.run(
        ["sh", "-c", moved], env=base_env() | env, capture_output=True, text=True, timeout=180, check=False
    )


def test_the_cronjobs_script_writes_a_backup_and_deletes_the_old_ones(tmp_path: Path) -> None:
    data = fixture_data(tmp_path)
    (tmp_path / "backups").mkdir()
    old = tmp_path / "backups" / "selfhub-20250101T000000Z.tar.gz"
    old.write_bytes(b"an old one")
    fifteen_days = time.time() - 15 * 86400
    os.utime(old, (fifteen_days, fifteen_days))
    done = run(script("cronjob.yaml"), tmp_path)
    assert done.returncode == 0, done.stderr
    made = list((tmp_path / "backups").glob("selfhub-*.tar.gz"))
    assert len(made) == 1 and made[0] != old, made
    assert "acme: main " in done.stdout and data.is_dir()


def test_the_upgrade_job_then_each_roll_back_restore_the_format_0_data(tmp_path: Path) -> None:
    data = fixture_data(tmp_path)
    (tmp_path / "backups").mkdir()
    upgraded = run(script("upgrade-job.yaml"), tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    assert (data / "format").read_text() == "1\n"
    (before,) = (tmp_path / "backups").glob("before-upgrade-*.tar.gz")

    rolled = run(script("restore-job.yaml"), tmp_path, BACKUP=before.name)
    assert rolled.returncode == 0, rolled.stderr
    assert not (data / "format").exists(), "the data directory is not the one from before the upgrade"
    assert (data / ".replaced" / "format").read_text() == "1\n"
    assert sorted(p.name for p in (data / "workspaces").iterdir()) == ["acme"]
    assert not (data / ".restored").exists()


def test_the_compose_roll_back_restores_the_upgrades_backup(tmp_path: Path) -> None:
    data = fixture_data(tmp_path)
    upgraded = run("self admin upgrade --data /data --backup /data/backups/before-upgrade.tar.gz", tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    block = re.search(r"```sh\n(.*?)```", section(OPERATE, "Roll back with compose"), re.S)
    assert block is not None
    (line,) = [line for line in block.group(1).splitlines() if "docker compose run" in line]
    inner = shlex.split(line)[-1]  # what `sh -c` runs in the container
    rolled = run(inner, tmp_path)
    assert rolled.returncode == 0, rolled.stderr
    assert not (data / "format").exists() and (data / ".replaced" / "format").read_text() == "1\n"
    assert (data / ".replaced" / "backups" / "before-upgrade.tar.gz").is_file()
