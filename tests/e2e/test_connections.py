"""Connections a real `self serve` holds open: one whose request headers do not arrive within
`limits.header_s` is closed; past `limits.connections_per_client` from one address, or
`limits.connections` in all, a new connection is answered 503 with a `Retry-After`; once those
close, requests are served again, and another address's `/healthz` is answered throughout.
Raw sockets on loopback (Linux answers every 127.x.y.z, so a test can be several clients)."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.serving import Service, admin

HEADER_S, PER_CLIENT, TOTAL = 1, 5, 20
HALF = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "  # the headers never end
WHOLE = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("conns")
    data = folder / "data"
    admin(data, "workspace", "add", "acme")
    config = folder / "serve.toml"
    config.write_text(
        f"[limits]\nheader_s = {HEADER_S}\nconnections_per_client = {PER_CLIENT}\nconnections = {TOTAL}\n"
    )
    started = Service(data, folder / "serve.log", config)
    try:
        yield started
    finally:
        started.stop()


def opened(service: Service, source: str = "127.0.0.1", first: bytes = HALF) -> socket.socket:
    sock = socket.socket()
    sock.settimeout(5)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", service.port))
    sock.sendall(first)
    return sock


def answer_of(sock: socket.socket) -> bytes:
    """What the service sends until it closes (or 5 s pass)."""
    got = b""
    with contextlib.suppress(TimeoutError, ConnectionResetError):
        while chunk := sock.recv(65536):
            got += chunk
    return got


def healthz(service: Service, source: str) -> int:
    sock = opened(service, source, WHOLE)
    with sock:
        return int(answer_of(sock).split(b" ", 2)[1])


@contextlib.contextmanager
def held(service: Service, sources: list[str]) -> Iterator[list[socket.socket]]:
    socks = [opened(service, source) for source in sources]
    try:
        yield socks
    finally:
        for sock in socks:
            sock.close()


def settled(service: Service, source: str, seconds: float = 5.0) -> None:
    """Wait until `source` is served again (the service saw the closes)."""
    deadline = time.monotonic() + seconds
    while healthz(service, source) != 200:
        assert time.monotonic() < deadline, f"{source} is still refused {seconds} s after its closes"
        time.sleep(0.05)


def test_a_connection_whose_headers_never_end_is_closed(service: Service) -> None:
    sock = opened(service, "127.0.0.9")
    started = time.monotonic()
    with sock:
        got = answer_of(sock)
    took = time.monotonic() - started
    assert took < HEADER_S + 2, f"closed after {took:.1f} s, not within the {HEADER_S} s header time"
    assert not got.startswith(b"HTTP/1.1 2"), got
    silent = opened(service, "127.0.0.9", b"")  # connected, sends nothing at all
    with silent:
        started = time.monotonic()
        answer_of(silent)
        assert time.monotonic() - started < HEADER_S + 2


def test_past_the_per_client_cap_a_connection_is_503(service: Service) -> None:
    with held(service, ["127.0.0.2"] * PER_CLIENT):
        refused = opened(service, "127.0.0.2", WHOLE)
        with refused:
            got = answer_of(refused)
        assert got.startswith(b"HTTP/1.1 503"), got[:200]
        assert b"retry-after:" in got.lower()
        assert healthz(service, "127.0.0.3") == 200, "another address is served meanwhile"
        with httpx.Client(base_url=service.url, timeout=5) as client:
            assert client.get("/healthz").status_code == 200, "and 127.0.0.1"
    settled(service, "127.0.0.2")


def test_past_the_total_cap_a_connection_is_503(service: Service) -> None:
    sources = [f"127.0.1.{n % 10 + 1}" for n in range(TOTAL)]  # 2 each: under the per-client cap
    with held(service, sources):
        refused = opened(service, "127.0.2.1", WHOLE)
        with refused:
            assert answer_of(refused).startswith(b"HTTP/1.1 503")
    settled(service, "127.0.2.1")


def test_fifty_slow_clients_leave_the_service_answering(service: Service) -> None:
    """Fifty half-header connections from one address: all but the cap are refused at once,
    the rest closed at the header time; then the address is served again."""
    socks = []
    try:
        for _ in range(50):
            socks.append(opened(service, "127.0.0.4"))
        assert healthz(service, "127.0.0.5") == 200
        started = time.monotonic()
        for sock in socks:
            answer_of(sock)
        assert time.monotonic() - started < HEADER_S + 3, "every one was closed by the service"
    finally:
        for sock in socks:
            sock.close()
    settled(service, "127.0.0.4")


def test_the_limits_are_checked_at_start(tmp_path: Path) -> None:
    from service.server.api.config import ConfigError, parse

    with pytest.raises(ConfigError, match="connections_per_client"):
        parse({"limits": {"connections_per_client": -1}}, "serve.toml")
