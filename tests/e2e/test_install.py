"""docs/operate.md's Install, run as written: selfhub's wheel built from the sources, installed
in a new venv with its dependencies from requirements.runtime.lock (`--require-hashes`), and
`self serve` from that venv serving the web view (its templates and static files come with the
wheel) to a signed-in token."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.test_docs import run_lines, sh_lines
from tests.support.selfrun import REPO, base_env
from tests.support.servers import free_port

pytestmark = pytest.mark.slow

GUIDE = REPO / "docs" / "operate.md"


def sources(into: Path) -> Path:
    """What a checkout holds for the install: the sources, the README, the lock."""
    for name in ("pyproject.toml", "README.md", "requirements.runtime.lock"):
        shutil.copy2(REPO / name, into / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("service", "cli"):
        shutil.copytree(REPO / name, into / name, ignore=ignore)
    return into


def test_the_install_block_makes_a_venv_that_serves_the_web_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    checkout = sources(tmp_path)
    monkeypatch.setenv("HOME", str(home))  # base_env() passes it to the block's shell
    outputs = run_lines(checkout, sh_lines(GUIDE, "Install"))
    assert any(out.strip() == "self 0.1.0" for out in outputs.values()), outputs
    venv = home / ".local/share/selfhub"
    wheels = list((checkout / "dist").glob("selfhub-*-py3-none-any.whl"))
    assert len(wheels) == 1, wheels
    self_ = str(venv / "bin/self")
    env = {k: v for k, v in base_env().items() if k != "PYTHONPATH"} | {"HOME": str(home)}

    def admin(*args: str) -> str:
        done = subprocess.run(
            [self_, "admin", *args, "--data", str(tmp_path / "data")],
            env=env,
            cwd=home,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    admin("workspace", "add", "acme")
    admin("user", "add", "ann")
    secret = admin("token", "create", "ann", "--workspace", "acme", "--role", "reader").strip()
    port = free_port()
    served = subprocess.Popen(
        [self_, "serve", "--data", str(tmp_path / "data"), "--port", str(port)],
        env=env,
        cwd=home,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, served)
        with httpx.Client(base_url=url, timeout=30) as client:
            form = client.get("/signin")
            assert form.status_code == 200 and "<form" in form.text, form.text
            assert client.get("/static/view.css").status_code == 200, "the static files came with the wheel"
            signed = client.post("/signin", data={"token": secret, "next": "/"})
            assert signed.status_code == 303, signed.text
            home_page = client.get("/")
            assert home_page.status_code == 200 and "acme" in home_page.text, home_page.text
    finally:
        served.send_signal(signal.SIGTERM)
        _, err = served.communicate(timeout=20)
    assert served.returncode == 0, err.decode()


def wait_ready(url: str, served: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert served.poll() is None, f"self serve exited {served.returncode}"
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("the service from the venv did not become ready")
