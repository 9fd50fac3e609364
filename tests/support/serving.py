"""A real `self serve` process over a data directory made by the `self admin` commands,
on a free loopback port, stopped by its pid (used by the service's e2e tests)."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.support.selfrun import SELF, base_env, describe, run_self
from tests.support.servers import free_port

START_S = 20.0


def admin(data: Path, *args: str) -> str:
    """`self admin ARGS --data DATA`, required to exit 0; its stdout."""
    proc = run_self(("admin", *args, "--data", str(data)), base_env())
    assert proc.returncode == 0, describe(proc)
    return proc.stdout


def token(data: Path, user: str, workspace: str, role: str) -> str:
    return admin(data, "token", "create", user, "--workspace", workspace, "--role", role).strip()


def token_id(data: Path, secret: str) -> str:
    import json

    rows = json.loads(admin(data, "token", "list", "--json"))
    return str(next(r["id"] for r in rows if secret.startswith(r["prefix"])))


class Service:
    """`self serve --data DATA --port P [--config FILE]`, up once /healthz answers 200; its
    stdout and stderr (the log lines) go to `log`."""

    def __init__(
        self, data: Path, log: Path, config: Path | None = None, env: dict[str, str] | None = None
    ) -> None:
        self.data = data
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log
        self.log = log.open("wb")
        configured = ["--config", str(config)] if config is not None else []
        self.proc = subprocess.Popen(
            [
                SELF,
                "serve",
                "--data",
                str(data),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                *configured,
            ],
            env=base_env() | (env or {}),
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.wait("/healthz")

    def wait(self, path: str) -> None:
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"`self serve` exited {self.proc.returncode} before serving")
            try:
                if httpx.get(self.url + path, timeout=1.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"{path} did not answer 200 within {START_S} s")

    def client(self, secret: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {secret}"} if secret is not None else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30.0)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """`sig` to the pid this helper started; its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


class Listener:
    """An SSE client in a thread: the events it received (id and parsed data)."""

    def __init__(
        self, service: Service, secret: str, last: str | None = None, workspace: str = "acme"
    ) -> None:
        self.workspace = workspace
        self.got: list[tuple[str, dict[str, Any]]] = []
        self.open = threading.Event()
        headers = {"Authorization": f"Bearer {secret}"} | ({"Last-Event-ID": last} if last else {})
        self._client = httpx.Client(base_url=service.url, headers=headers, timeout=httpx.Timeout(30, read=60))
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self.open.wait(10), "the stream did not open"

    def _run(self) -> None:
        with self._client.stream("GET", f"/api/v1/workspaces/{self.workspace}/stream") as answer:
            assert answer.status_code == 200
            self.open.set()
            current: dict[str, str] = {}
            try:
                for line in answer.iter_lines():
                    if line.startswith(("id:", "data:")):
                        key, _, value = line.partition(":")
                        current[key] = value.strip()
                    elif not line and "data" in current:
                        self.got.append((current.get("id", ""), json.loads(current["data"])))
                        current = {}
            except httpx.HTTPError:
                return

    def until(self, n: int, seconds: float = 10) -> list[tuple[str, dict[str, Any]]]:
        deadline = time.monotonic() + seconds
        while len(self.got) < n and time.monotonic() < deadline:
            time.sleep(0.02)
        return list(self.got)

    def close(self) -> None:
        self._client.close()
