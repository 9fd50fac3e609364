"""The compose profile `replicas` as written: two instances of the service, each with its own
DATA, run as the single one is but with `--replicated` and the identity database; HAProxy and
PostgreSQL built from Debian's packages on the service's base; the load balancer the one
address the replicas trust, checking /readyz and reaching both; the replicas' configuration a
remote-backed workspace the service loads. tests/integration/test_replicas_postgres.py runs the
database's start script."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Any

import yaml

from service.server.api.config import parse
from tests.support.selfrun import REPO
from tests.unit.test_deploy_tls import defaults

REPLICAS = ("replica-1", "replica-2")
PROFILE = (*REPLICAS, "lb", "postgres")


def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((REPO / "docker-compose.yml").read_text()))


def test_the_profile_runs_two_instances_each_on_its_own_volume() -> None:
    doc = compose()
    services, single = doc["services"], doc["services"]["selfhub"]
    assert all(services[name]["profiles"] == ["replicas"] for name in PROFILE)
    volumes = [services[name]["volumes"] for name in REPLICAS]
    assert volumes == [[f"selfhub-{name}:/data"] for name in REPLICAS], "a DATA each: mirror and index"
    for name in REPLICAS:
        replica = services[name]
        assert replica["image"] == single["image"] and replica["build"] == single["build"]
        assert replica["command"] == [*single["command"], "--replicated"]
        assert replica["depends_on"] == {"postgres": {"condition": "service_healthy"}}
        for same in ("healthcheck", "read_only", "cap_drop", "security_opt", "logging", "env_file"):
            assert replica[same] == single[same], same


def test_the_replicas_reach_postgres_with_a_password_from_the_environment() -> None:
    services = compose()["services"]
    for name in REPLICAS:
        given = dict(e.partition("=")[::2] for e in services[name]["environment"] if "=" in e)
        assert given["SELF_IDENTITY"] == "postgresql://selfhub:${SELFHUB_PG_PASSWORD:-}@postgres:5432/selfhub"
        named = [e for e in services[name]["environment"] if "=" not in e]
        assert all(re.fullmatch(r"[A-Z][A-Z0-9_]*", entry) for entry in named)
    assert services["postgres"]["environment"] == ["SELFHUB_PG_PASSWORD"]
    assert "ports" not in services["postgres"], "the database is reached on the compose network only"
    assert services["postgres"]["volumes"] == ["selfhub-postgres:/var/lib/postgresql/data"]
    assert "pg_isready" in services["postgres"]["healthcheck"]["test"]


def test_the_load_balancer_is_the_one_address_the_replicas_trust() -> None:
    doc = compose()
    services = doc["services"]
    lb = services["lb"]
    address = ipaddress.ip_address(defaults(lb["networks"]["default"]["ipv4_address"]))
    (pool,) = doc["networks"]["default"]["ipam"]["config"]
    subnet, given_out = (ipaddress.ip_network(defaults(pool[k])) for k in ("subnet", "ip_range"))
    assert address in subnet and address not in given_out
    assert address != ipaddress.ip_address(defaults(services["tls"]["networks"]["default"]["ipv4_address"]))
    for name in REPLICAS:
        trusted = [e for e in services[name]["environment"] if e.startswith("SELF_TRUSTED_PROXIES=")]
        assert trusted == [f"SELF_TRUSTED_PROXIES={lb['networks']['default']['ipv4_address']}"]
    (port,) = lb["ports"]
    assert defaults(port).startswith("127.0.0.1:") and port.endswith(":8765")
    assert lb["depends_on"] == list(REPLICAS)


def test_haproxy_balances_over_both_replicas_that_are_ready() -> None:
    text = (REPO / "deploy/replicas/haproxy.cfg").read_text()
    assert re.search(r"^\s*bind :8765$", text, re.M)
    assert re.search(r"^\s*option httpchk GET /readyz$", text, re.M)
    assert re.search(r"^\s*option forwardfor$", text, re.M)
    servers = re.findall(r"^\s*server (\S+) (\S+):8765$", text, re.M)
    assert servers == [(name, name) for name in REPLICAS]


def test_the_proxy_and_the_database_are_debian_packages_on_the_service_base() -> None:
    services = compose()["services"]
    ignored = (REPO / ".dockerignore").read_text().split()
    for name, package in (("lb", "haproxy"), ("postgres", "postgresql")):
        build = services[name]["build"]
        assert build["args"]["BASE_IMAGE"] == services["selfhub"]["build"]["args"]["BASE_IMAGE"]
        text = (REPO / build["dockerfile"]).read_text()
        assert "\nFROM ${BASE_IMAGE}\n" in text
        assert f"install -y --no-install-recommends {package} " in text
        assert re.search(r"^USER (haproxy|postgres)$", text, re.M), "not root"
        for copied in re.findall(r"^COPY (\S+) ", text, re.M):
            assert f"!{copied}" in ignored, f"{copied} is in the build context"
            assert (REPO / copied).is_file()
    assert (REPO / "deploy/replicas/postgres-start.sh").stat().st_mode & 0o111, "executable"


def test_the_replicas_configuration_is_a_remote_backed_workspace_the_service_loads(tmp_path: Path) -> None:
    import tomllib

    content = compose()["configs"]["replicas"]["content"]
    text = defaults(content.replace("${SELFHUB_REMOTE_URL:-}", "https://git.example/team/acme-state.git"))
    config = parse(tomllib.loads(text), "replicas", tmp_path)
    (remote,) = config.remotes.values()
    assert remote.webhook_secret_env == "SELFHUB_WEBHOOK_SECRET" and remote.poll_s > 0
    assert "SELFHUB_WEBHOOK_SECRET" in compose()["services"]["replica-1"]["environment"]
