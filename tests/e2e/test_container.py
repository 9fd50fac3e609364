"""The deploy image as an operator runs it (deploy/Dockerfile, docker-compose.yml).

The image is built from `deploy/Dockerfile` on a Debian base made by `deploy/debian-base.sh`
(no image registry is needed), from wheels built here with `pip wheel` and with no network
during the build. The container runs as docker-compose.yml runs it — its command (the TOML
configuration, mounted read-only), a read-only root filesystem with /tmp on tmpfs, every
capability dropped, no new privileges, a named volume at /data — with its port published on
127.0.0.1 only. Then, as a team would:

- the image's HEALTHCHECK turns the container healthy; `/healthz` and `/readyz` answer;
- `docker exec … self admin` makes a workspace, users and tokens (the token alone on stdout);
- a writer writes through the API (a project, a goal, a raw event) and reads it back;
- `self clone` and `self sync` from this machine against the git endpoint
  (`http://127.0.0.1:PORT/git/acme.git`, the token in SELF_TOKEN) carry a decision to the
  service and the service's events back;
- `docker restart`, then `docker stop` (exit 0 on SIGTERM) and a new container on the same
  volume: every event is still served, and a new clone holds every one.

No Docker engine, or no base image: the test is skipped saying why — or fails, where
SELF_REQUIRE_DOCKER=1 (CI sets it: .ci/run prepares the engine and the base image).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.support.selfrun import REPO, base_env, describe, run_self

pytestmark = pytest.mark.slow

BASE_IMAGE = os.environ.get("SELF_DEPLOY_BASE_IMAGE", "selfhub-base:bookworm")
PORT = 8765  # the image's: EXPOSE, the entry point's --port, the HEALTHCHECK's URL
WS, SLUG = "acme", "web"
START_S = 60.0
STEP = re.compile(r"^ ---> ([0-9a-f]{12})$")


def unavailable(reason: str) -> None:
    """Skip, saying why; a failure where SELF_REQUIRE_DOCKER=1 (CI)."""
    if os.environ.get("SELF_REQUIRE_DOCKER") == "1":
        pytest.fail(f"{reason} (SELF_REQUIRE_DOCKER=1: the container test must run)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def engine() -> Iterator[Any]:
    """The Docker engine's client, with testcontainers set to reach containers through their
    published ports on localhost and without its reaper (whose image cannot be pulled here)."""
    os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
    os.environ.setdefault("TESTCONTAINERS_CONNECTION_MODE", "docker_host")
    import docker
    from docker.errors import DockerException, ImageNotFound

    # The engine's socket first, by hand: docker's client leaves the socket of a failed
    # connection open.
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if host.startswith("unix://"):
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(host.removeprefix("unix://"))
            except OSError as exc:
                unavailable(f"no Docker engine answers at {host}: {exc}")
    client = docker.from_env(timeout=120)
    try:
        client.ping()
    except DockerException as exc:
        client.close()
        unavailable(f"the Docker engine at {host} does not answer: {exc}")
    try:
        client.images.get(BASE_IMAGE)
    except ImageNotFound:
        client.close()
        unavailable(f"no base image {BASE_IMAGE}: make it with `deploy/debian-base.sh {BASE_IMAGE}`")
    yield client
    client.close()


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    """The service of docker-compose.yml: the container runs as it says."""
    doc = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    service: dict[str, Any] = doc["services"]["selfhub"]
    service["config_files"] = {
        c["target"]: REPO / doc["configs"][c["source"]]["file"] for c in service["configs"]
    }
    return service


@pytest.fixture(scope="module")
def image(engine: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """deploy/Dockerfile built on BASE_IMAGE with no network: the build context holds the
    sources the Dockerfile copies and a wheelhouse of selfhub and its dependencies."""
    from testcontainers.core.image import DockerImage

    context = tmp_path_factory.mktemp("image-context")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, context / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("service", "cli"):
        shutil.copytree(REPO / name, context / name, ignore=ignore)
    shutil.copytree(REPO / "deploy", context / "deploy", ignore=shutil.ignore_patterns("*.whl"))
    wheels = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            str(context),
            "-w",
            str(context / "deploy/wheelhouse"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert wheels.returncode == 0, f"pip wheel exited {wheels.returncode}:\n{wheels.stderr}"
    tag = f"selfhub-e2e:{uuid.uuid4().hex[:12]}"
    built = DockerImage(
        path=str(context),
        dockerfile_path="deploy/Dockerfile",
        tag=tag,
        clean_up=False,
        buildargs={"BASE_IMAGE": BASE_IMAGE},
        network_mode="none",  # no index, no registry: the wheelhouse and the base's git suffice
        rm=True,
        forcerm=True,
    )
    built.build()
    # Each step's image (the build stage's among them, left untagged): removed afterwards
    # unless a tag or another image still holds it.
    steps = [m.group(1) for e in built.get_logs() if (m := STEP.match(str(e.get("stream", ""))))]
    try:
        yield tag
    finally:
        from docker.errors import APIError

        engine.images.remove(tag, force=True)
        for step in reversed(steps):
            with contextlib.suppress(APIError):
                if not engine.images.get(step).tags:  # never the base image, nor any tagged one
                    engine.images.remove(step)


@pytest.fixture
def volume(engine: Any) -> Iterator[str]:
    """A named volume for DATA, removed afterwards (with nothing else)."""
    name = f"selfhub-e2e-{uuid.uuid4().hex[:12]}"
    made = engine.volumes.create(name)
    try:
        yield name
    finally:
        made.remove(force=True)


class Running:
    """One container of the image, run as docker-compose.yml runs the service; its port on
    127.0.0.1 only. Every container this test starts is removed by `remove`."""

    def __init__(self, image: str, volume: str, compose: dict[str, Any]) -> None:
        from testcontainers.core.container import DockerContainer

        container = DockerContainer(image).with_command(compose["command"])
        container.with_volume_mapping(volume, "/data", "rw")
        for target, source in compose["config_files"].items():
            container.with_volume_mapping(str(source), target, "ro")
        for path in compose.get("tmpfs", []):
            container.with_tmpfs_mount(path)
        container.ports[f"{PORT}/tcp"] = ("127.0.0.1", None)  # type: ignore[assignment]
        container.with_kwargs(
            read_only=compose.get("read_only", False),
            cap_drop=compose.get("cap_drop", []),
            security_opt=compose.get("security_opt", []),
        )
        self.tc = container.start()
        self.url = ""
        self.wait_served()

    @property
    def docker(self) -> Any:
        return self.tc.get_wrapped_container()

    def wait_served(self) -> None:
        """Until /healthz and /readyz answer 200 on the published port (read again: a
        restart may publish another)."""
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            self.docker.reload()
            bound = (self.docker.attrs["NetworkSettings"]["Ports"] or {}).get(f"{PORT}/tcp")
            if self.docker.status == "exited":
                raise AssertionError(f"the container exited:\n{self.logs()}")
            if bound:
                assert {b["HostIp"] for b in bound} == {"127.0.0.1"}, bound
                self.url = f"http://127.0.0.1:{bound[0]['HostPort']}"
                try:
                    if all(
                        httpx.get(self.url + p, timeout=2).status_code == 200 for p in ("/healthz", "/readyz")
                    ):
                        return
                except httpx.TransportError:
                    pass
            time.sleep(0.2)
        raise AssertionError(f"/healthz and /readyz did not answer within {START_S} s:\n{self.logs()}")

    def health(self, seconds: float = 45.0) -> str:
        """The image's HEALTHCHECK status once it is past `starting` (its interval is 10 s)."""
        deadline = time.monotonic() + seconds
        while True:
            self.docker.reload()
            status = str(self.docker.attrs["State"].get("Health", {}).get("Status", "none"))
            if status != "starting" or time.monotonic() > deadline:
                return status
            time.sleep(0.5)

    def exec(self, *args: str) -> str:
        """`docker exec CONTAINER ARGS` (as the image's user); its stdout, required to exit 0."""
        code, (out, err) = self.docker.exec_run(list(args), demux=True)
        out_s, err_s = (out or b"").decode(), (err or b"").decode()
        assert code == 0, (
            f"docker exec {' '.join(args)} exited {code}\n--- stdout\n{out_s}--- stderr\n{err_s}"
        )
        return out_s

    def admin(self, *args: str) -> str:
        return self.exec("self", "admin", *args)

    def client(self, secret: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {secret}"}, timeout=30.0)

    def logs(self) -> str:
        out, err = self.tc.get_logs()
        return (out + err).decode(errors="replace")[-6000:]

    def stop(self) -> int:
        """`docker stop` (SIGTERM, then the grace period); the exit code."""
        self.docker.stop(timeout=20)
        self.docker.reload()
        return int(self.docker.attrs["State"]["ExitCode"])

    def remove(self) -> None:
        print(f"--- the container's log (last lines)\n{self.logs()}")
        self.docker.remove(force=True, v=False)


@pytest.fixture
def run(image: str, volume: str, compose: dict[str, Any]) -> Iterator[Any]:
    """`run()` starts a container of the image on the test's volume; all are removed after."""
    started: list[Running] = []

    def start() -> Running:
        started.append(Running(image, volume, compose))
        return started[-1]

    yield start
    for running in started:
        running.remove()


def served_ids(running: Running, secret: str) -> list[str]:
    """The ids of project web's events, as the service reads them from DATA (every page)."""
    ids: list[str] = []
    after: str | None = None
    with running.client(secret) as client:
        while True:
            params = {"limit": "10000"} | ({"after": after} if after else {})
            answer = client.get(f"/api/v1/workspaces/{WS}/projects/{SLUG}/events", params=params)
            assert answer.status_code == 200, answer.text
            page = answer.json()
            ids += [e["id"] for e in page["events"]]
            after = page["next"]
            if after is None:
                return ids


def clone_ids(clone: Path) -> list[str]:
    """The ids of project web's events in a clone's log files, in order."""
    lines: list[str] = []
    for segment in sorted((clone / "projects" / SLUG / "log").glob("*.jsonl")):
        lines += [json.loads(line)["id"] for line in segment.read_text().splitlines() if line.strip()]
    return lines


def cli(env: dict[str, str], *args: str, cwd: Path) -> str:
    done = run_self(args, env, cwd=cwd)
    assert done.returncode == 0, describe(done)
    return done.stdout


def test_image_serves_syncs_and_keeps_every_event_on_its_volume(run: Any, tmp_path: Path) -> None:
    first: Running = run()
    assert first.exec("id", "-u").strip() == "10001", "the service runs as the image's unprivileged user"
    assert first.exec("git", "--version").startswith("git version"), "the git endpoint's program is there"

    # The operator's setup, through `docker exec`: a token is printed alone on stdout.
    first.admin("workspace", "add", WS)
    for user in ("ann", "ben", "agent"):
        first.admin("user", "add", user)
    ann = first.admin("token", "create", "ann", "--workspace", WS, "--role", "admin").strip()
    ben = first.admin("token", "create", "ben", "--workspace", WS, "--role", "writer").strip()
    agent = first.admin("token", "create", "agent", "--workspace", WS, "--role", "reader").strip()
    for secret in (ann, ben, agent):
        assert secret.startswith("shb_") and len(secret) == 47 and "\n" not in secret, secret

    # Writes and reads through the API.
    with first.client(ann) as client:
        added = client.post(
            f"/api/v1/workspaces/{WS}/commands",
            json={"command": "project-add", "slug": SLUG, "description": "the web app"},
        )
        assert added.status_code == 201, added.text
        goal = client.post(
            f"/api/v1/workspaces/{WS}/commands",
            params={"project": SLUG},
            json={"command": "add", "preset": "goal", "text": "ship the first page"},
        )
        assert goal.status_code == 201, goal.text
    with first.client(ben) as client:
        posted = client.post(
            f"/api/v1/workspaces/{WS}/events",
            json={
                "events": [
                    {
                        "type": "entity.confirmed",
                        "project": SLUG,
                        "payload": {"text": "try a static export", "labels": ["idea"]},
                    }
                ]
            },
        )
        assert posted.status_code == 201, posted.text
        projects = client.get(f"/api/v1/workspaces/{WS}/projects")
        assert projects.status_code == 200 and SLUG in projects.text, projects.text
    with first.client(agent) as client:
        context = client.get(f"/api/v1/workspaces/{WS}/projects/{SLUG}/context", params={"format": "plain"})
        assert context.status_code == 200, context.text
        assert "ship the first page" in context.text, context.text
        found = client.get("/api/v1/search", params={"q": "static export"})
        assert found.status_code == 200 and found.json()["matched"] == 1, found.text
        refused = client.post(f"/api/v1/workspaces/{WS}/events", json={"events": []})
        assert refused.status_code == 403, "a reader's token does not write"
    written = served_ids(first, agent)
    assert len(written) == 2 and posted.json()["ids"][0] in written, written

    # Ben's CLI on this machine: clone the git endpoint, decide, sync; the service has it.
    remote = f"{first.url}/git/{WS}.git"
    ben_env = base_env() | {"SELF_TOKEN": ben}
    clone = tmp_path / "ben-state"
    cli(ben_env, "clone", remote, str(clone), cwd=tmp_path)
    assert clone_ids(clone) == written, "the clone holds what the service served"
    in_clone = ben_env | {"SELF_WORKSPACE": str(clone), "SELF_PROJECT": SLUG}
    cli(in_clone, "decide", "render on the server", "--why", "a fast first paint", cwd=tmp_path)
    cli(in_clone, "sync", cwd=tmp_path)
    after_push = served_ids(first, agent)
    assert len(after_push) == 3 and after_push[:2] == written, after_push
    with first.client(agent) as client:
        context = client.get(f"/api/v1/workspaces/{WS}/projects/{SLUG}/context", params={"format": "plain"})
        assert "render on the server" in context.text, context.text

    # A write over HTTP comes back to Ben's clone with his next sync.
    with first.client(ben) as client:
        later = client.post(
            f"/api/v1/workspaces/{WS}/commands",
            params={"project": SLUG},
            json={"command": "add", "preset": "goal", "text": "ship the second page"},
        )
        assert later.status_code == 201, later.text
    cli(in_clone, "sync", cwd=tmp_path)
    every = served_ids(first, agent)
    assert len(every) == 4 and clone_ids(clone) == every, (every, clone_ids(clone))
    with first.client(ben) as client:
        status = client.get(f"/api/v1/workspaces/{WS}/projects/{SLUG}/status")
        assert status.status_code == 200, status.text

    # The image's HEALTHCHECK (python's urllib on /healthz) has turned the container healthy.
    assert first.health() == "healthy", first.docker.attrs["State"].get("Health")

    # docker restart: the same container, the same volume, every event.
    first.docker.restart(timeout=20)
    first.wait_served()
    assert served_ids(first, agent) == every, "every event is served after `docker restart`"

    # docker stop: SIGTERM ends the service cleanly; a new container on the volume serves
    # every event, to the tokens made before, and a new clone holds every one.
    assert first.stop() == 0, f"`self serve` exits 0 on SIGTERM:\n{first.logs()}"
    second: Running = run()
    assert served_ids(second, agent) == every, "every event is on the volume"
    again = tmp_path / "again"
    cli(ben_env, "clone", f"{second.url}/git/{WS}.git", str(again), cwd=tmp_path)
    assert clone_ids(again) == every
    listed = json.loads(second.admin("token", "list", "--json"))
    assert {row["user"] for row in listed} == {"ann", "ben", "agent"}, listed
