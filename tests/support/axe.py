"""axe-core (the npm package) run in the browser a test drives: installed once with npm into
~/.cache/selfhub-tests/ (XDG_CACHE_HOME), evaluated in the page (the page's own Content-Security-
Policy stays on: a script the driver evaluates is not one the page loads).

Without npm or the network the browser tests that run it skip, saying why; where
SELF_REQUIRE_AXE=1 (CI sets it: .ci/run) that is a failure."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

PACKAGE = "axe-core@4"
FAILING = ("serious", "critical")  # impacts a test fails on


def cache() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "selfhub-tests" / "axe"


def source() -> str:
    """axe.min.js, installed first if the cache lacks it."""
    script = cache() / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        _install(script)
    return script.read_text(encoding="utf-8")


def _install(script: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        _missing("no npm to install axe-core: `apt-get install npm`")
    staging = cache().parent / f"axe-{os.getpid()}"
    proc = subprocess.run(
        [str(npm), "install", "--prefix", str(staging), "--no-audit", "--no-fund", "--silent", PACKAGE],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        _missing(f"`npm install {PACKAGE}` failed: {proc.stderr.strip()[-400:]}")
    try:
        staging.replace(cache())  # another worker may have installed it first: keep that one
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    if not script.exists():
        _missing(f"`npm install {PACKAGE}` left no {script.name}")


def _missing(reason: str) -> None:
    if os.environ.get("SELF_REQUIRE_AXE") == "1":
        pytest.fail(f"{reason} (SELF_REQUIRE_AXE=1: the accessibility checks must run)", pytrace=False)
    pytest.skip(reason)


RUN = """async () => (await axe.run(document, {resultTypes: ["violations"]})).violations.map(v => ({
  id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(" "))
}))"""


def violations(page: Any, axe: str) -> list[dict[str, Any]]:
    """Every violation axe finds on the page as it is now, of every impact."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(f"() => {{ {axe}\n}}")
        if not page.evaluate("() => typeof window.axe === 'object'"):
            raise AssertionError("axe-core did not load in the page")
    found: list[dict[str, Any]] = page.evaluate(RUN)
    return found


def failing(page: Any, axe: str) -> list[dict[str, Any]]:
    """The serious and critical violations on the page."""
    return [v for v in violations(page, axe) if v["impact"] in FAILING]
