"""The version is written once: service.__version__, which pyproject.toml reads for the package."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import service

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_package_version_is_read_from_service() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "service.__version__"}


def test_the_installed_version_is_service_version() -> None:
    assert importlib.metadata.version("selfhub") == service.__version__
