"""`self admin backup` while a real `self serve` takes writes from posting clients, and `self
admin restore` into a new folder served by a second real `self serve`: every event acknowledged
before the backup began is there, a pushed event's author on record too, and the tokens work.
A restore refuses a folder that is not empty, and an archive whose counts do not match."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import tarfile
import threading
import time
from pathlib import Path

import pytest

from tests.support import gitclient as gc
from tests.support.selfrun import SELF, base_env, describe, run_self
from tests.support.serving import Service, admin, token

SPACES = ("acme", "beta")
SLUG = "web"


def cli(data: Path, workspace: str, *args: str) -> None:
    env = base_env() | {"SELF_WORKSPACE": str(data / "workspaces" / workspace), "SELF_PROJECT": SLUG}
    proc = run_self(args, env)
    assert proc.returncode == 0, describe(proc)


def make_data(data: Path) -> dict[str, str]:
    """DATA with workspaces acme and beta (project web, a goal each), user ann; her writer tokens."""
    for name in SPACES:
        admin(data, "workspace", "add", name)
    admin(data, "user", "add", "ann")
    for name in SPACES:
        cli(data, name, "project", "add", SLUG)
        cli(data, name, "goal", "add", f"the goal of {name}")
    return {name: token(data, "ann", name, "writer") for name in SPACES}


class Poster:
    """A client posting one event after another to a workspace until stopped; each acknowledged
    event's id with the moment its answer arrived."""

    def __init__(self, service: Service, secret: str, workspace: str) -> None:
        self.acked: list[tuple[float, str]] = []
        self.failed: list[str] = []
        self._stop = threading.Event()
        self._client = service.client(secret)
        self._path = f"/api/v1/workspaces/{workspace}/events"
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            n += 1
            note = {
                "type": "entity.confirmed",
                "project": SLUG,
                "payload": {"text": f"{self._path} note {n}"},
            }
            answer = self._client.post(self._path, json={"events": [note]})
            if answer.status_code != 201:
                self.failed.append(answer.text)
                continue
            at = time.monotonic()
            self.acked += [(at, event) for event in answer.json()["ids"]]

    def until(self, n: int) -> None:
        deadline = time.monotonic() + 30
        while len(self.acked) < n and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(self.acked) >= n, f"{len(self.acked)} events acknowledged in 30 s: {self.failed[:3]}"

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        self._client.close()


def push_relayed(service: Service, secret: str, tmp: Path) -> str:
    """An event pushed over the git endpoint that names no author: ann, who pushed it, is its
    author on record (`.local/pushes.jsonl`); its id."""
    clone = tmp / "clone"
    gc.ok(tmp, "clone", "-q", gc.url(service.url, secret, "acme"), str(clone))
    pushed, line = gc.event(SLUG, "pushed over git by ann")
    gc.append(clone, SLUG, [line])
    gc.ok(tmp, "commit", "-qam", "an event by hand", cwd=clone)
    gc.ok(tmp, "push", "-q", "origin", "HEAD:main", cwd=clone)
    return pushed


def served(service: Service, secret: str, workspace: str) -> dict[str, dict[str, object]]:
    with service.client(secret) as client:
        answer = client.get(
            f"/api/v1/workspaces/{workspace}/projects/{SLUG}/events", params={"limit": 10_000}
        )
        assert answer.status_code == 200, answer.text
        events = answer.json()["events"]
        assert len(events) < 10_000, "the log outgrew one page: read it in pages"
        return {e["id"]: e for e in events}


@pytest.mark.slow
def test_a_backup_under_write_load_restores_every_acknowledged_event(tmp_path: Path) -> None:
    data, archive, restored = tmp_path / "data", tmp_path / "backup.tar.gz", tmp_path / "restored"
    secrets = make_data(data)
    service = Service(data, tmp_path / "serve.log")
    service.wait("/readyz")
    pushed = push_relayed(service, secrets["acme"], tmp_path)
    posters = {name: Poster(service, secrets[name], name) for name in SPACES}
    try:
        for poster in posters.values():
            poster.until(20)
        began = time.monotonic()
        made = subprocess.run(
            [SELF, "admin", "backup", "--data", str(data), "--to", str(archive)],
            env=base_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        ended = time.monotonic()
        for poster in posters.values():
            poster.until(len(poster.acked) + 10)  # writes went on after the backup too
    finally:
        for poster in posters.values():
            poster.stop()
        assert service.stop() == 0
    assert made.returncode == 0, describe(made)
    during = sum(1 for p in posters.values() for at, _ in p.acked if began <= at < ended)
    assert during > 0, "no write was acknowledged while the backup ran"

    proc = run_self(("admin", "restore", str(archive), "--data", str(restored)), base_env())
    assert proc.returncode == 0, describe(proc)
    again = Service(restored, tmp_path / "restored.log")
    try:
        again.wait("/readyz")
        for name, poster in posters.items():
            held = served(again, secrets[name], name)
            before = [event for at, event in poster.acked if at < began]
            lost = [event for event in before if event not in held]
            assert not lost, (
                f"{name}: {len(lost)} of {len(before)} events acknowledged before the backup are gone"
            )
        assert served(again, secrets["acme"], "acme")[pushed].get("pushed_by") == "ann"
        with again.client(secrets["beta"]) as client:  # the tokens work, writes too
            note = {"type": "entity.confirmed", "project": SLUG, "payload": {"text": "after the restore"}}
            answer = client.post("/api/v1/workspaces/beta/events", json={"events": [note]})
            assert answer.status_code == 201, answer.text
    finally:
        assert again.stop() == 0


def test_a_restore_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    data, archive, target = tmp_path / "data", tmp_path / "b.tar.gz", tmp_path / "target"
    make_data(data)
    made = run_self(("admin", "backup", "--data", str(data), "--to", str(archive)), base_env())
    assert made.returncode == 0, describe(made)
    target.mkdir()
    (target / "notes.txt").write_text("someone's\n")
    proc = run_self(("admin", "restore", str(archive), "--data", str(target)), base_env())
    assert proc.returncode == 1, describe(proc)
    assert "is not empty: a backup is restored into a new or empty folder" in proc.stderr
    assert [p.name for p in target.iterdir()] == ["notes.txt"]


def tampered(archive: Path, to: Path) -> None:
    """A copy of `archive` whose manifest counts one event more in acme."""
    with tarfile.open(archive) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]  # type: ignore[union-attr]
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for member, content in members:
            if member.name == "manifest.json":
                manifest = json.loads(content)
                manifest["workspaces"][0]["counts"]["events"] += 1
                content = json.dumps(manifest).encode()
                member.size = len(content)
            tar.addfile(member, io.BytesIO(content))
    to.write_bytes(gzip.compress(out.getvalue()))


def test_a_restore_verifies_the_manifests_counts(tmp_path: Path) -> None:
    data, archive, forged, target = (tmp_path / n for n in ("data", "b.tar.gz", "f.tar.gz", "target"))
    make_data(data)
    made = run_self(("admin", "backup", "--data", str(data), "--to", str(archive)), base_env())
    assert made.returncode == 0, describe(made)
    assert "acme: main " in made.stdout and "2 events" in made.stdout, made.stdout
    tampered(archive, forged)
    proc = run_self(("admin", "restore", str(forged), "--data", str(target)), base_env())
    assert proc.returncode == 1, describe(proc)
    assert "the backup counted" in proc.stderr, proc.stderr
    assert not target.exists() or not any(target.iterdir()), "a failed restore left files behind"
