"""`self serve` as an operator runs it, on real processes: the lines it writes as it starts and
stops; the probes' request lines at debug only (`--log-level`); the git endpoint's lines naming
their route; `X-Forwarded-For` and `-Proto` honoured from the configured proxies only (the rate
limit's client address, the web view's Secure cookie); `/metrics` behind a token or on a port of
its own."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service import __version__
from tests.support.selfrun import SELF, base_env, describe, run_self
from tests.support.servers import free_port
from tests.support.serving import Service, admin, token

WS = "acme"
PROBES = ("/healthz", "/readyz", "/metrics")
METRICS_VAR = "SELFHUB_E2E_METRICS_TOKEN"
SCRAPE = "scrape-" + "k" * 24


def lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def requests(log: Path) -> list[dict[str, Any]]:
    return [line for line in lines(log) if line.get("event") == "request"]


def until_logged(log: Path, request_id: str) -> list[dict[str, Any]]:
    """The log's lines once the request `request_id`'s line is among them."""
    deadline = time.monotonic() + 10
    while not any(r.get("request_id") == request_id for r in requests(log)):
        assert time.monotonic() < deadline, f"no line for request {request_id}:\n{log.read_text()}"
        time.sleep(0.05)
    return lines(log)


def made(root: Path) -> tuple[Path, str]:
    """A data directory with workspace acme, user ann and a reader's token of hers."""
    data = root / "data"
    admin(data, "workspace", "add", WS)
    admin(data, "user", "add", "ann")
    return data, token(data, "ann", WS, "reader")


def serve(root: Path, data: Path, config: str, env: dict[str, str] | None = None) -> Service:
    path = root / "serve.toml"
    path.write_text(config)
    service = Service(data, root / "serve.log", path, env)
    service.wait("/readyz")
    return service


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, str]]:
    """A service with no configuration: the defaults (info, no proxy trusted, /metrics open)."""
    root = tmp_path_factory.mktemp("plain")
    data, reader = made(root)
    service = Service(data, root / "serve.log")
    service.wait("/readyz")
    yield service, reader
    service.stop()


def test_it_says_what_it_serves_as_it_starts(plain: tuple[Service, str]) -> None:
    service, _ = plain
    said = {line["event"]: line for line in lines(service.log_path) if line.get("event") != "request"}
    starting, listening = said["starting"], said["listening"]
    assert starting["version"] == __version__ and starting["level"] == "info", starting
    assert starting["data"] == str(service.data) and starting["workspaces"] == [WS], starting
    assert starting["log_level"] == "info" and starting["format"] == 1, starting
    assert listening["urls"] == [service.url], listening
    assert listening["trusted_proxies"] == [] and listening["metrics"] == "/metrics", listening


def test_probes_are_not_logged_at_info_and_other_requests_are(plain: tuple[Service, str]) -> None:
    service, reader = plain
    with service.client(reader) as client:
        for _ in range(3):
            for path in PROBES:
                assert client.get(path).status_code == 200, path
        listed = client.get(f"/api/v1/workspaces/{WS}/projects", headers={"X-Request-Id": "after-probes"})
        assert listed.status_code == 200, listed.text
    logged = until_logged(service.log_path, "after-probes")
    routes = [line["route"] for line in logged if line.get("event") == "request"]
    assert "/api/v1/workspaces/{ws}/projects" in routes
    assert not set(PROBES) & set(routes), f"a probe's line at info: {routes}"


def test_a_git_endpoint_line_names_its_route_and_workspace(plain: tuple[Service, str]) -> None:
    service, reader = plain
    answer = httpx.get(
        f"{service.url}/git/{WS}.git/info/refs",
        params={"service": "git-upload-pack"},
        auth=("x", reader),
        headers={"X-Request-Id": "git-refs"},
    )
    assert answer.status_code == 200, answer.text
    line = next(r for r in until_logged(service.log_path, "git-refs") if r.get("request_id") == "git-refs")
    assert line["route"] == "/git/{ws}.git/info/refs" and line["workspace"] == WS, line
    exposition = httpx.get(f"{service.url}/metrics").text
    assert 'route="/git/{ws}.git/info/refs"' in exposition, "the metrics name the git route too"


def test_forwarded_headers_do_not_count_from_an_untrusted_peer(tmp_path: Path) -> None:
    data, reader = made(tmp_path)
    service = serve(tmp_path, data, "[limits]\nrate = 0.01\nburst = 1\n")
    try:
        assert forwarded_limits(service) == [401, 429], "two forwarded addresses share the peer's bucket"
        assert "secure" not in signed_in_cookie(service, reader).lower()
    finally:
        service.stop()


def test_forwarded_headers_count_from_a_trusted_proxy_and_metrics_ask_a_token(tmp_path: Path) -> None:
    data, reader = made(tmp_path)
    config = (
        'trusted_proxies = ["127.0.0.0/8"]\n[limits]\nrate = 0.01\nburst = 1\n'
        f'[metrics]\ntoken_env = "{METRICS_VAR}"\n'
    )
    service = serve(tmp_path, data, config, {METRICS_VAR: SCRAPE})
    try:
        assert forwarded_limits(service) == [401, 401], "each forwarded address has its own bucket"
        assert "secure" in signed_in_cookie(service, reader).lower().split("; ")
        refused = httpx.get(f"{service.url}/metrics")
        assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
        wrong = httpx.get(f"{service.url}/metrics", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        scraped = httpx.get(f"{service.url}/metrics", headers={"Authorization": f"Bearer {SCRAPE}"})
        assert scraped.status_code == 200 and "selfhub_requests_total" in scraped.text
        assert SCRAPE not in service.log_path.read_text(), "the token is in no line"
    finally:
        service.stop()


def forwarded_limits(service: Service) -> list[int]:
    """Two requests without a token, each forwarded for another address, in a bucket of one."""
    return [
        httpx.get(
            f"{service.url}/api/v1/workspaces", headers={"X-Forwarded-For": f"203.0.113.{n}"}
        ).status_code
        for n in (1, 2)
    ]


def signed_in_cookie(service: Service, reader: str) -> str:
    """The cookie of a web sign-in forwarded as https."""
    answer = httpx.post(
        f"{service.url}/signin",
        data={"token": reader, "next": "/"},
        headers={"X-Forwarded-Proto": "https"},
    )
    assert answer.status_code == 303, answer.text
    return answer.headers["set-cookie"]


def test_metrics_on_a_port_of_their_own_and_probes_at_debug(tmp_path: Path) -> None:
    data, _ = made(tmp_path)
    port = free_port()
    service = serve(tmp_path, data, f"[metrics]\nport = {port}\n", {"SELF_LOG_LEVEL": "debug"})
    try:
        assert httpx.get(f"{service.url}/metrics").status_code == 404, "not on the service's port"
        scraped = httpx.get(f"http://127.0.0.1:{port}/metrics")
        assert scraped.status_code == 200 and "selfhub_requests_total" in scraped.text
        assert httpx.get(f"{service.url}/healthz", headers={"X-Request-Id": "probe"}).status_code == 200
        probe = next(r for r in until_logged(service.log_path, "probe") if r.get("request_id") == "probe")
        assert probe["level"] == "debug" and probe["route"] == "/healthz", probe
        listening = next(line for line in lines(service.log_path) if line["event"] == "listening")
        assert listening["metrics"] == f"http://127.0.0.1:{port}/metrics", listening
    finally:
        service.stop()


def test_a_stop_is_said_and_the_process_exits_0(tmp_path: Path) -> None:
    data, _ = made(tmp_path)
    service = Service(data, tmp_path / "serve.log")
    assert service.stop(signal.SIGTERM) == 0
    said = [line["event"] for line in lines(tmp_path / "serve.log")]
    assert said[-2:] == ["stopping", "stopped"], said
    stopping = next(line for line in lines(tmp_path / "serve.log") if line["event"] == "stopping")
    assert stopping["signal"] == "SIGTERM", stopping


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        (["--log-level", "loud"], {}, "--log-level: 'loud' is not one of debug, info, warning, error"),
        (
            ["--trusted-proxies", "proxy.local"],
            {},
            "--trusted-proxies: 'proxy.local' is no address or network",
        ),
        (["--config", "{config}"], {}, f"metrics.token_env names {METRICS_VAR}, which is not set"),
    ],
)
def test_a_refused_option_is_one_line_before_anything_binds(
    tmp_path: Path, args: list[str], env: dict[str, str], said: str
) -> None:
    data, _ = made(tmp_path)
    config = tmp_path / "serve.toml"
    config.write_text(f'[metrics]\ntoken_env = "{METRICS_VAR}"\n')
    port = free_port()
    argv = ["serve", "--data", str(data), "--port", str(port), *(a.format(config=config) for a in args)]
    done = run_self(argv, base_env() | env)
    assert done.returncode == 2, describe(done)
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_log_level_flag_is_taken(tmp_path: Path) -> None:
    """`--log-level warning`: neither the request lines nor the start lines are written."""
    data, reader = made(tmp_path)
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen(
        [SELF, "serve", "--data", str(data), "--port", str(port), "--log-level", "warning"],
        env=base_env(),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"{url}/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline and proc.poll() is None, "the service did not start"
            time.sleep(0.05)
        answer = httpx.get(f"{url}/api/v1/workspaces", headers={"Authorization": f"Bearer {reader}"})
        assert answer.status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        log.close()
    assert (tmp_path / "serve.log").read_text() == "", "nothing below warning"
