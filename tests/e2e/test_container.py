"""The deploy image as an operator runs it (deploy/Dockerfile, docker-compose.yml).

The image is built from `deploy/Dockerfile` on a Debian base made by `deploy/debian-base.sh`
(no image registry is needed), from a wheelhouse of requirements.runtime.lock's files (checked
against its hashes) and selfhub's own wheel, with no network during the build; the image holds
no pip or setuptools. The container runs as docker-compose.yml runs it — its command (the TOML
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

The compose profile `tls` runs as compose runs it: Caddy built from deploy/tls/Dockerfile on the
same base, at its fixed address on the compose network, in front of the service: https answers
with a certificate of Caddy's local CA, http redirects to https, the service takes the proxy's
X-Forwarded-Proto (its session cookie is Secure) and no other peer's, /metrics stays inside.

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
LOCK = "requirements.runtime.lock"


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
    for name in ("pyproject.toml", "README.md", LOCK):
        shutil.copy2(REPO / name, context / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("service", "cli"):
        shutil.copytree(REPO / name, context / name, ignore=ignore)
    shutil.copytree(REPO / "deploy", context / "deploy", ignore=shutil.ignore_patterns("*.whl"))
    house = str(context / "deploy/wheelhouse")
    pip = [sys.executable, "-m", "pip", "--quiet"]
    for step in (
        [*pip, "download", "--require-hashes", "--no-deps", "-r", str(context / LOCK), "-d", house],
        [*pip, "wheel", "--no-deps", str(context), "-w", house],
    ):
        done = subprocess.run(step, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, f"{' '.join(step[3:5])} exited {done.returncode}:\n{done.stderr}"
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

    def __init__(
        self, image: str, volume: str, compose: dict[str, Any], env: dict[str, str] | None = None
    ) -> None:
        from testcontainers.core.container import DockerContainer

        container = DockerContainer(image).with_command(compose["command"])
        for key, value in (env or {}).items():
            container.with_env(key, value)
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

    def start(env: dict[str, str] | None = None) -> Running:
        started.append(Running(image, volume, compose, env))
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
    for python in ("python3", "/opt/selfhub/bin/python"):
        for module in ("pip", "setuptools"):
            code, _ = first.docker.exec_run([python, "-c", f"import {module}"])
            assert code != 0, f"{python} imports {module}: the image installs no Python package"

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


# The compose profile `tls`.

VARIABLE = re.compile(r"\$\{(?P<name>[A-Z_]+):-(?P<default>[^}]*)\}")


def interpolated(value: str, given: dict[str, str]) -> str:
    """`value` as compose reads it, with the variables `given` set and the others unset."""
    return VARIABLE.sub(lambda m: given.get(m["name"], m["default"]), value)


@pytest.fixture(scope="module")
def proxy_image(
    engine: Any, compose_file: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The tls service's image, built as compose builds it (Debian's caddy: apt reaches Debian)."""
    from testcontainers.core.image import DockerImage

    build = compose_file["services"]["tls"]["build"]
    context = tmp_path_factory.mktemp("tls-context")
    shutil.copytree(REPO / "deploy/tls", context / "deploy/tls")
    tag = f"selfhub-e2e-tls:{uuid.uuid4().hex[:12]}"
    DockerImage(
        path=str(context),
        dockerfile_path=build["dockerfile"],
        tag=tag,
        clean_up=False,
        buildargs={"BASE_IMAGE": BASE_IMAGE},
        rm=True,
        forcerm=True,
    ).build()
    try:
        yield tag
    finally:
        engine.images.remove(tag, force=True)


@pytest.fixture(scope="module")
def compose_file() -> dict[str, Any]:
    return dict(yaml.safe_load((REPO / "docker-compose.yml").read_text()))


@pytest.fixture
def network(engine: Any, compose_file: dict[str, Any]) -> Iterator[tuple[str, dict[str, str]]]:
    """The compose network, on a subnet of its own for this test (the file's may be in use
    here): its name and the variables that put the proxy's address in it."""
    import random

    from docker.errors import APIError
    from docker.types import IPAMConfig, IPAMPool

    (pool,) = compose_file["networks"]["default"]["ipam"]["config"]
    name = f"selfhub-e2e-{uuid.uuid4().hex[:12]}"
    for _ in range(20):
        prefix = f"172.{random.randint(16, 31)}.{random.randint(0, 255)}"
        given = {
            "SELFHUB_SUBNET": f"{prefix}.0/24",
            "SELFHUB_IP_RANGE": f"{prefix}.128/25",
            "SELFHUB_PROXY_ADDRESS": f"{prefix}.10",
        }
        ipam = IPAMConfig(
            pool_configs=[
                IPAMPool(
                    subnet=interpolated(pool["subnet"], given), iprange=interpolated(pool["ip_range"], given)
                )
            ]
        )
        try:
            made = engine.networks.create(name, ipam=ipam)
            break
        except APIError:  # the subnet overlaps one the engine has
            continue
    else:
        pytest.fail("no free subnet for the test's network")
    try:
        yield name, given
    finally:
        made.reload()
        for attached in made.containers:  # the service's container, removed after this
            made.disconnect(attached, force=True)
        made.remove()


def test_the_tls_profile_serves_https_redirects_http_and_is_the_trusted_proxy(
    run: Any, proxy_image: str, network: tuple[str, dict[str, str]], compose_file: dict[str, Any], engine: Any
) -> None:
    import ssl

    net, given = network
    service_env = compose_file["services"]["selfhub"]["environment"]
    env = dict(interpolated(e, given).split("=", 1) for e in service_env if "=" in e)
    assert env == {"SELF_TRUSTED_PROXIES": given["SELFHUB_PROXY_ADDRESS"]}, env
    selfhub: Running = run(env)
    engine.networks.get(net).connect(selfhub.docker.id, aliases=["selfhub"])
    selfhub.admin("workspace", "add", WS)
    selfhub.admin("user", "add", "ann")
    reader = selfhub.admin("token", "create", "ann", "--workspace", WS, "--role", "reader").strip()

    proxy = start_proxy(engine, proxy_image, net, compose_file["services"]["tls"], given)
    try:
        ports = published(proxy)
        root = proxy_root_certificate(proxy)
        https = httpx.Client(
            base_url=f"https://127.0.0.1:{ports[443]}",
            verify=ssl.create_default_context(cadata=root),
            headers={"Host": "localhost"},
            timeout=30,
        )
        sni = {"sni_hostname": "localhost"}  # the certificate's name, on the loopback address
        with https:
            answered = until_ok(lambda: https.get("/readyz", extensions=sni))
            assert answered.json() == {"status": "ready"}
            bearer = {"Authorization": f"Bearer {reader}"}
            listed = https.get("/api/v1/workspaces", headers=bearer, extensions=sni)
            assert listed.status_code == 200 and listed.json() == [WS], listed.text
            signed = https.post("/signin", data={"token": reader, "next": "/"}, extensions=sni)
            assert signed.status_code == 303, signed.text
            assert "secure" in signed.headers["set-cookie"].lower().split("; "), "the proxy said https"
            assert https.get("/metrics", extensions=sni).status_code == 404, "/metrics stays inside"
        plain = httpx.get(f"http://127.0.0.1:{ports[80]}/readyz", headers={"Host": "localhost"})
        assert plain.status_code == 308 and plain.headers["location"] == "https://localhost/readyz"
        # Straight to the service's port, from the engine's gateway: no proxy the service trusts.
        direct = httpx.post(
            f"{selfhub.url}/signin",
            data={"token": reader, "next": "/"},
            headers={"X-Forwarded-Proto": "https"},
        )
        assert direct.status_code == 303 and "secure" not in direct.headers["set-cookie"].lower()
    finally:
        print(f"--- the proxy's log (last lines)\n{proxy.logs().decode(errors='replace')[-3000:]}")
        proxy.remove(force=True, v=True)


def start_proxy(engine: Any, image: str, net: str, service: dict[str, Any], given: dict[str, str]) -> Any:
    """The tls service's container, as compose runs it: its address on the network, its ports
    on 127.0.0.1 (any free ones), its environment, a volume for /data, read-only, no capability."""
    api = engine.api
    environment = [interpolated(e, given).split("  #")[0].strip() for e in service["environment"]]
    host = api.create_host_config(
        port_bindings={443: ("127.0.0.1", None), 80: ("127.0.0.1", None)},
        read_only=service["read_only"],
        tmpfs=dict.fromkeys(service["tmpfs"], ""),
        cap_drop=service["cap_drop"],
        security_opt=service["security_opt"],
    )
    address = interpolated(service["networks"]["default"]["ipv4_address"], given)
    networking = api.create_networking_config({net: api.create_endpoint_config(ipv4_address=address)})
    created = api.create_container(
        image, ports=[443, 80], environment=environment, host_config=host, networking_config=networking
    )
    api.start(created["Id"])
    return engine.containers.get(created["Id"])


def published(container: Any) -> dict[int, int]:
    deadline = time.monotonic() + 30
    while True:
        container.reload()
        ports = container.attrs["NetworkSettings"]["Ports"] or {}
        if all(ports.get(f"{p}/tcp") for p in (443, 80)):
            return {p: int(ports[f"{p}/tcp"][0]["HostPort"]) for p in (443, 80)}
        assert container.status != "exited" and time.monotonic() < deadline, container.logs().decode()
        time.sleep(0.2)


def proxy_root_certificate(container: Any) -> str:
    """The root of Caddy's local CA, once it has made it (in /data, the proxy's volume)."""
    deadline = time.monotonic() + 30
    while True:
        code, out = container.exec_run(["cat", "/data/caddy/pki/authorities/local/root.crt"])
        if code == 0 and b"BEGIN CERTIFICATE" in out:
            return str(out.decode())
        assert time.monotonic() < deadline, container.logs().decode()
        time.sleep(0.2)


def until_ok(ask: Any) -> httpx.Response:
    deadline = time.monotonic() + 30
    while True:
        try:
            answer: httpx.Response = ask()
            if answer.status_code == 200:
                return answer
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "https did not answer 200"
        time.sleep(0.3)
