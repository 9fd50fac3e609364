"""The locks: requirements.lock (selfhub's dependencies and the test extra) and
requirements.runtime.lock (the service's alone, for the image), both made by pip-compile with
hashes. Every dependency pyproject.toml names is pinned at a version its bounds allow, with the
hashes `pip install --require-hashes` checks; the runtime lock agrees with the whole one; CI and
the image install from them."""

from __future__ import annotations

import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support.selfrun import REPO

PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>\S+)")


def pins(lock: str) -> dict[str, tuple[str, int]]:
    """Each pinned name of a lock file: its version and how many hashes it has."""
    found: dict[str, tuple[str, int]] = {}
    current = ""
    for line in (REPO / lock).read_text().splitlines():
        if pinned := PIN.match(line):
            current = canonicalize_name(pinned["name"])
            found[current] = (pinned["version"], 0)
        elif line.strip().startswith("--hash=sha256:") and current:
            version, hashes = found[current]
            found[current] = (version, hashes + 1)
    return found


def declared(extra: str | None = None) -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    listed = project["optional-dependencies"][extra] if extra else project["dependencies"]
    return [Requirement(text) for text in listed]


def test_every_dependency_is_pinned_within_its_bounds_with_hashes() -> None:
    for lock, wanted in [
        ("requirements.runtime.lock", declared()),
        ("requirements.lock", declared() + declared("test")),
    ]:
        locked = pins(lock)
        assert locked, f"{lock} pins nothing"
        for requirement in wanted:
            name = canonicalize_name(requirement.name)
            assert name in locked, f"{lock} does not pin {name}: run pip-compile (docs/operate.md: Install)"
            version = locked[name][0]
            assert requirement.specifier.contains(version, prereleases=True), f"{lock}: {name}=={version}"
        unhashed = sorted(name for name, (_, hashes) in locked.items() if hashes == 0)
        assert not unhashed, f"{lock} pins without a hash: {unhashed}"


def test_the_runtime_lock_agrees_with_the_whole_one() -> None:
    whole, runtime = pins("requirements.lock"), pins("requirements.runtime.lock")
    differ = {n: (v, whole.get(n, ("-",))[0]) for n, (v, _) in runtime.items() if whole.get(n, ("",))[0] != v}
    assert not differ, f"pinned at other versions (runtime, whole): {differ}"


def test_ci_and_the_image_install_from_the_locks() -> None:
    ci = (REPO / ".ci/run").read_text()
    assert "pip install --quiet --require-hashes -r requirements.lock\n" in ci
    assert "pip install --quiet --no-deps -e .\n" in ci
    assert "-e '.[test]'" not in ci, "CI resolves nothing of its own"
    dockerfile = (REPO / "deploy/Dockerfile").read_text()
    assert "COPY pyproject.toml README.md requirements.runtime.lock ./" in dockerfile
    assert (
        "install --require-hashes --no-index --find-links wheelhouse -r requirements.runtime.lock"
        in dockerfile
    )
    assert "install --require-hashes -r requirements.runtime.lock" in dockerfile
    assert "!requirements.runtime.lock" in (REPO / ".dockerignore").read_text().split()
