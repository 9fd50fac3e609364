"""The compose profile `tls` as written: Caddy built from deploy/tls/Dockerfile on the service's
base, 443 and 80 published, its address fixed outside the range the network gives out and the
one address the service trusts for X-Forwarded-For and -Proto; the Caddyfile proxies to the
service and keeps /metrics inside. tests/e2e/test_container.py runs it on the Docker engine."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

import yaml

from tests.support.selfrun import REPO

DEFAULT = re.compile(r"\$\{(?P<name>[A-Z_]+):-(?P<default>[^}]*)\}")


def defaults(value: str) -> str:
    """`value` as compose reads it with none of its variables set."""
    return DEFAULT.sub(lambda m: m["default"], value)


def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((REPO / "docker-compose.yml").read_text()))


def test_the_proxy_is_the_one_address_the_service_trusts() -> None:
    doc = compose()
    proxy, service = doc["services"]["tls"], doc["services"]["selfhub"]
    assert proxy["profiles"] == ["tls"], "the proxy runs only when the profile is asked for"
    address = ipaddress.ip_address(defaults(proxy["networks"]["default"]["ipv4_address"]))
    (pool,) = doc["networks"]["default"]["ipam"]["config"]
    subnet, given_out = (ipaddress.ip_network(defaults(pool[k])) for k in ("subnet", "ip_range"))
    assert address in subnet and address not in given_out, "no other container can be given it"
    trusted = [e for e in service["environment"] if e.startswith("SELF_TRUSTED_PROXIES=")]
    assert [defaults(e) for e in trusted] == [f"SELF_TRUSTED_PROXIES={address}"]
    assert proxy["networks"]["default"]["ipv4_address"] == trusted[0].partition("=")[2], "one variable"


def test_the_proxy_is_built_on_the_service_base_and_publishes_https_and_http() -> None:
    doc = compose()
    proxy, service = doc["services"]["tls"], doc["services"]["selfhub"]
    assert proxy["build"]["dockerfile"] == "deploy/tls/Dockerfile"
    assert proxy["build"]["args"]["BASE_IMAGE"] == service["build"]["args"]["BASE_IMAGE"]
    assert sorted(defaults(p).rsplit(":", 1)[1] for p in proxy["ports"]) == ["443", "80"]
    assert proxy["read_only"] is True and proxy["cap_drop"] == ["ALL"]
    assert "selfhub-tls:/data" in proxy["volumes"], "its certificates outlive the container"
    for running in (proxy, service):
        options = running["logging"]["options"]
        assert running["logging"]["driver"] == "json-file" and options["max-size"] and options["max-file"]


def test_the_caddyfile_proxies_to_the_service_and_keeps_metrics_inside() -> None:
    text = (REPO / "deploy/tls/Caddyfile").read_text()
    assert re.search(r"^\s*reverse_proxy selfhub:8765\b", text, re.M)
    assert re.search(r"^\s*respond /metrics 404$", text, re.M)
    assert "{$SELFHUB_DOMAIN:localhost}" in text and "tls {$SELFHUB_TLS:internal}" in text
    assert "!deploy/tls/Caddyfile" in (REPO / ".dockerignore").read_text().split()


def test_the_ingress_example_is_a_valid_ingress_with_a_certificate_from_cert_manager() -> None:
    from kubernetes_validate import utils as k8s

    (ingress,) = [d for d in yaml.safe_load_all((REPO / "deploy/k8s/ingress/ingress.yaml").read_text()) if d]
    for version in ("1.29", sorted(set(k8s.all_versions()), key=lambda v: tuple(map(int, v.split("."))))[-1]):
        k8s.validate(ingress, version, strict=True)
    assert ingress["metadata"]["annotations"]["cert-manager.io/cluster-issuer"]
    (tls,) = ingress["spec"]["tls"]
    (rule,) = ingress["spec"]["rules"]
    assert tls["hosts"] == [rule["host"]] and tls["secretName"]
    backend = rule["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": "selfhub", "port": {"name": "http"}}, "the Service of deploy/k8s/service.yaml"


def test_the_pod_carries_the_scrape_annotations() -> None:
    (statefulset,) = yaml.safe_load_all((REPO / "deploy/k8s/statefulset.yaml").read_text())
    annotations = statefulset["spec"]["template"]["metadata"]["annotations"]
    port = statefulset["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"]
    assert annotations == {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": str(port),
        "prometheus.io/path": "/metrics",
    }
