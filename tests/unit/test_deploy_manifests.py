"""The deploy files read offline: deploy/k8s/ against the Kubernetes API's own schemas (the
ones kubernetes-validate ships, strict: an unknown field is refused), every supported
version from MIN_K8S to the newest it knows; and what the Kubernetes manifests, the compose
file and the Dockerfile must agree on — the port, the user, the probes' paths, the data
volume, the configuration (the ConfigMap holds deploy/selfhub.toml, which the service
loads), and secrets only ever by reference."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_validate import utils as k8s

from service.server.api.config import load

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"
MIN_K8S = (1, 29)  # the oldest Kubernetes release the manifests are held to
PORT = 8765
UID = 10001


def documents(path: Path) -> list[dict[str, Any]]:
    with path.open() as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def manifests() -> list[tuple[str, dict[str, Any]]]:
    kustomization = documents(K8S / "kustomization.yaml")[0]
    return [(name, doc) for name in kustomization["resources"] for doc in documents(K8S / name)]


def versions() -> list[str]:
    known = sorted(set(k8s.all_versions()), key=lambda v: tuple(int(p) for p in v.split(".")))
    return [v for v in known if tuple(int(p) for p in v.split(".")[:2]) >= MIN_K8S]


def kind(name: str) -> dict[str, Any]:
    found = [doc for _, doc in manifests() if doc["kind"] == name]
    assert len(found) >= 1, f"no {name} in deploy/k8s"
    return found[0]


def pod() -> dict[str, Any]:
    spec: dict[str, Any] = kind("StatefulSet")["spec"]["template"]["spec"]
    return spec


def container() -> dict[str, Any]:
    (only,) = pod()["containers"]
    return dict(only)


def dockerfile() -> str:
    return (DEPLOY / "Dockerfile").read_text()


def compose_service() -> dict[str, Any]:
    service: dict[str, Any] = documents(REPO / "docker-compose.yml")[0]["services"]["selfhub"]
    return service


def test_kustomization_lists_every_manifest() -> None:
    listed = set(documents(K8S / "kustomization.yaml")[0]["resources"])
    on_disk = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == on_disk
    assert {doc["kind"] for _, doc in manifests()} == {"ConfigMap", "Service", "StatefulSet"}


@pytest.mark.parametrize("version", versions())
def test_manifests_are_valid_kubernetes_objects(version: str) -> None:
    assert len(versions()) >= 2, "kubernetes-validate ships the schemas of the versions tested"
    for name, doc in manifests():
        try:
            k8s.validate(doc, version, strict=True)
        except k8s.ValidationError as exc:
            pytest.fail(
                f"{name}: {doc['kind']}/{doc['metadata']['name']} on Kubernetes {version}: {exc.message}"
            )


def test_the_validation_refuses_a_misspelt_field() -> None:
    """The control: strict validation is not a formality."""
    statefulset = kind("StatefulSet")
    statefulset["spec"]["template"]["spec"]["containers"][0]["livenesProbe"] = {"httpGet": {"path": "/"}}
    with pytest.raises(k8s.ValidationError, match="livenesProbe"):
        k8s.validate(statefulset, versions()[-1], strict=True)
    wrong = kind("Service")
    wrong["spec"]["ports"][0]["port"] = "eighty"
    with pytest.raises(k8s.ValidationError):
        k8s.validate(wrong, versions()[-1], strict=True)


def test_the_configmap_holds_the_configuration_the_service_loads(tmp_path: Path) -> None:
    text = kind("ConfigMap")["data"]["serve.toml"]
    assert text == (DEPLOY / "selfhub.toml").read_text(), (
        "deploy/k8s/configmap.yaml holds deploy/selfhub.toml"
    )
    written = tmp_path / "serve.toml"
    written.write_text(text)
    settings = load(written)
    assert settings.limits.shutdown_s < pod()["terminationGracePeriodSeconds"]
    assert tomllib.loads(text)["logging"]["format"] == "json"
    mounts = {m["name"]: m for m in container()["volumeMounts"]}
    assert container()["args"] == ["--config", f"{mounts['config']['mountPath']}/serve.toml"]
    assert container()["args"] == compose_service()["command"], "Kubernetes and compose run the same command"


def test_the_pod_probes_runs_as_the_image_user_and_keeps_data_on_a_claim() -> None:
    statefulset = kind("StatefulSet")
    assert statefulset["spec"]["replicas"] == 1, "one writer per workspace: never two pods on DATA"
    spec, box = pod(), container()
    (port,) = box["ports"]
    assert port == {"name": "http", "containerPort": PORT, "protocol": "TCP"}
    assert box["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert box["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert box["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert {"cpu", "memory"} <= set(box["resources"]["requests"])
    pod_security, security = spec["securityContext"], box["securityContext"]
    assert pod_security["runAsNonRoot"] is True
    assert pod_security["runAsUser"] == pod_security["runAsGroup"] == pod_security["fsGroup"] == UID
    assert security["allowPrivilegeEscalation"] is False and security["readOnlyRootFilesystem"] is True
    assert security["capabilities"]["drop"] == ["ALL"]
    mounts = {m["mountPath"]: m["name"] for m in box["volumeMounts"]}
    claims = {c["metadata"]["name"] for c in statefulset["spec"]["volumeClaimTemplates"]}
    assert mounts["/data"] in claims, "DATA is on the PersistentVolumeClaim"
    assert "/tmp" in mounts, "a writable /tmp beside the read-only root"
    services = [doc for _, doc in manifests() if doc["kind"] == "Service"]
    assert statefulset["spec"]["serviceName"] in {s["metadata"]["name"] for s in services}
    for service in services:
        assert service["spec"]["selector"] == statefulset["spec"]["selector"]["matchLabels"]
        assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"]


def test_secrets_come_only_by_reference() -> None:
    """No Secret object and no literal value but DATA's path: the tokens and webhook secrets
    come from the Secret selfhub-secrets, made in the cluster (README: Deploy)."""
    assert all(doc["kind"] != "Secret" for _, doc in manifests())
    box = container()
    assert box["envFrom"] == [{"secretRef": {"name": "selfhub-secrets", "optional": True}}]
    assert box["env"] == [{"name": "SELF_DATA", "value": "/data"}]
    assert pod()["automountServiceAccountToken"] is False


def test_compose_runs_the_image_as_kubernetes_does() -> None:
    service = compose_service()
    assert service["build"]["dockerfile"] == "deploy/Dockerfile" and service["build"]["context"] == "."
    assert "selfhub-data:/data" in service["volumes"]
    volumes = documents(REPO / "docker-compose.yml")[0]["volumes"]
    assert volumes == dict.fromkeys(
        ["selfhub-data", "selfhub-tls", "selfhub-replica-1", "selfhub-replica-2", "selfhub-postgres"]
    )
    assert all(p.startswith("127.0.0.1:") and p.endswith(f":{PORT}") for p in service["ports"])
    # the environment passes names through from the shell, never a value written here (but the
    # address of the tls profile's proxy: tests/unit/test_deploy_tls.py)
    named = [e for e in service["environment"] if not e.startswith("SELF_TRUSTED_PROXIES=")]
    assert all(re.fullmatch(r"[A-Z][A-Z0-9_]*", entry) for entry in named)
    assert "SELF_TOKEN" in service["environment"]
    assert service["env_file"] == [{"path": "selfhub.env", "required": False}]
    assert "selfhub.env" in (REPO / ".gitignore").read_text().split()
    assert "/healthz" in " ".join(service["healthcheck"]["test"])
    assert service["read_only"] is True and service["cap_drop"] == ["ALL"]
    grace = re.fullmatch(r"(\d+)s", service["stop_grace_period"])
    assert grace and int(grace.group(1)) > load(DEPLOY / "selfhub.toml").limits.shutdown_s
    (config,) = service["configs"]
    source = documents(REPO / "docker-compose.yml")[0]["configs"][config["source"]]["file"]
    assert source == "deploy/selfhub.toml" and config["target"] == "/etc/selfhub/serve.toml"


def test_the_dockerfile_builds_a_non_root_image_with_git_serving_on_a_volume() -> None:
    text = dockerfile()
    assert text.count("\nFROM ${BASE_IMAGE} AS ") == 2, "multi-stage: a build stage and the runtime"
    assert "\nARG BASE_IMAGE=python:3.12-slim\n" in text
    assert f"\nUSER {UID}:{UID}\n" in text
    assert '\nVOLUME ["/data"]\n' in text and f"\nEXPOSE {PORT}\n" in text
    assert f"http://127.0.0.1:{PORT}/healthz" in text.split("HEALTHCHECK", 1)[1].split("\n\n", 1)[0]
    entry = re.search(r"^ENTRYPOINT (\[.*\])$", text, re.MULTILINE)
    assert entry is not None
    assert yaml.safe_load(entry.group(1)) == [
        "self", "serve", "--data", "/data", "--host", "0.0.0.0", "--port", str(PORT),
    ]  # fmt: skip
    runtime = text.split("AS runtime", 1)[1]
    assert "command -v git" in runtime and "install -y --no-install-recommends git" in runtime
    assert not re.search(r"(?i)(token|secret|password)\s*=", text), "no secret is baked into the image"


# --- deploy/k8s/replicas: several replicas on one git host (docs/replicas.md) -----------------

REPLICAS = K8S / "replicas"


def overlay() -> dict[str, Any]:
    return documents(REPLICAS / "kustomization.yaml")[0]


def replica_manifests() -> list[tuple[str, dict[str, Any]]]:
    """The overlay's objects as kustomize makes them: its resources and the ConfigMap of
    serve.toml."""
    found = [(name, doc) for name in overlay()["resources"] for doc in documents(REPLICAS / name)]
    (generated,) = overlay()["configMapGenerator"]
    data = {name: (REPLICAS / name).read_text() for name in generated["files"]}
    meta = {"name": generated["name"], "labels": generated["options"]["labels"]}
    return [*found, ("serve.toml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data})]


def replica_kind(name: str) -> dict[str, Any]:
    (found,) = [doc for _, doc in replica_manifests() if doc["kind"] == name]
    return found


def test_the_replicas_overlay_lists_every_manifest() -> None:
    listed = set(overlay()["resources"])
    assert listed == {p.name for p in REPLICAS.glob("*.yaml")} - {"kustomization.yaml"}
    kinds = sorted(doc["kind"] for _, doc in replica_manifests())
    assert kinds == ["ConfigMap", "PodDisruptionBudget", "Service", "Service", "Service", "StatefulSet"]
    assert overlay()["images"] == documents(K8S / "kustomization.yaml")[0]["images"]


@pytest.mark.parametrize("version", versions())
def test_the_replicas_manifests_are_valid_kubernetes_objects(version: str) -> None:
    for name, doc in replica_manifests():
        try:
            k8s.validate(doc, version, strict=True)
        except k8s.ValidationError as exc:
            pytest.fail(f"replicas/{name}: {doc['kind']} on Kubernetes {version}: {exc.message}")


def test_kustomize_renders_the_replicas_overlay_as_read_here() -> None:
    import shutil
    import subprocess

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("needs kubectl (its kustomize)")
    rendered = subprocess.run(
        [kubectl, "kustomize", str(REPLICAS)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    made = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(rendered) if d}
    for _, doc in replica_manifests():
        got = made[(doc["kind"], doc["metadata"]["name"])]
        k8s.validate(got, versions()[-1], strict=True)
        assert got["metadata"]["labels"]["app.kubernetes.io/part-of"] == "selfhub"
    assert made[("ConfigMap", "selfhub-config")]["data"] == replica_kind("ConfigMap")["data"]


def test_each_replica_is_the_single_pod_with_its_own_claim_identity_and_replicated_writes() -> None:
    """The replicas' StatefulSet is deploy/k8s's but for what makes them replicas: more pods,
    started together and spread, SELF_REPLICATED and SELF_IDENTITY from the Secret."""
    import copy

    single, several = kind("StatefulSet"), copy.deepcopy(replica_kind("StatefulSet"))
    assert several["spec"]["replicas"] >= 2 and several["spec"]["podManagementPolicy"] == "Parallel"
    spec = several["spec"]["template"]["spec"]
    spread = spec.pop("topologySpreadConstraints")
    assert {c["topologyKey"] for c in spread} == {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}
    (box,) = spec["containers"]
    env = {e["name"]: e for e in box["env"]}
    assert env["SELF_REPLICATED"]["value"] == "true"
    assert env["SELF_IDENTITY"]["valueFrom"] == {"secretKeyRef": {"name": "selfhub-identity", "key": "url"}}
    box["env"] = [e for e in box["env"] if e["name"] not in ("SELF_REPLICATED", "SELF_IDENTITY")]
    several["spec"]["replicas"], several["spec"]["podManagementPolicy"] = 1, "OrderedReady"
    assert several == single, "deploy/k8s/replicas/statefulset.yaml is deploy/k8s's but for the above"
    assert several["spec"]["volumeClaimTemplates"], "each replica has its own claim for its mirror and index"
    assert (REPLICAS / "service.yaml").read_text() == (K8S / "service.yaml").read_text()


def test_the_replicas_share_postgres_by_reference_and_mirror_every_workspace(tmp_path: Path) -> None:
    assert all(doc["kind"] != "Secret" for _, doc in replica_manifests()), "secrets only by reference"
    database = next(d for _, d in replica_manifests() if d["metadata"]["name"] == "selfhub-postgres")
    assert database["spec"]["type"] == "ExternalName" and database["spec"]["ports"][0]["port"] == 5432
    assert "selfhub-postgres" in (REPLICAS / "kustomization.yaml").read_text(), "the Secret's URL names it"
    budget = replica_kind("PodDisruptionBudget")
    assert budget["spec"]["selector"] == replica_kind("StatefulSet")["spec"]["selector"]
    assert budget["spec"]["maxUnavailable"] == 1
    config = replica_kind("ConfigMap")
    volumes = {v["name"]: v for v in replica_kind("StatefulSet")["spec"]["template"]["spec"]["volumes"]}
    assert volumes["config"]["configMap"]["name"] == config["metadata"]["name"]
    written = tmp_path / "serve.toml"
    written.write_text(config["data"]["serve.toml"])
    settings = load(written)
    assert settings.remotes and not settings.workspaces, "every workspace mirrors the git host"
    assert all(r.poll_s > 0 and r.webhook_secret_env for r in settings.remotes.values())
    assert settings.identity is None, "the identity URL holds a password: from the Secret, never here"
