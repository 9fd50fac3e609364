"""The service's configuration on a real data directory: what `build` makes of it, and the
app an ASGI server starts by import string (`SELF_DATA`, `SELF_SERVE_CONFIG`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.api.app import build, from_environment
from service.api.config import ConfigError, ServiceConfig, parse
from service.data.workspaces import Data

# litestar 2.25 warns, building the app, that the routes declare path parameters in the
# inferred style (service/api/routes.py, writes.py, stream.py): theirs to move, not this test's
pytestmark = pytest.mark.filterwarnings("ignore:.*declared using deprecated inferred style")


def test_build_makes_the_configurations_workspaces_and_keeps_the_rest(tmp_path: Path) -> None:
    data = Data(tmp_path / "data")
    data.add("acme")
    config = parse({"workspaces": ["acme", "new-one"], "limits": {"body_bytes": 4096}}, "serve.toml")
    app = build(data.root, config)
    assert data.names() == ["acme", "new-one"]
    assert app.state["config"] is config and app.request_max_body_size == 4096
    limiter = app.state["limiter"]
    assert (limiter.rate, limiter.burst) == (config.limits.rate, config.limits.burst)
    assert app.state["hub"].observer is app.state["metrics"], "commits and fold lag are counted"


def test_the_import_string_app_reads_the_configuration_the_environment_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "serve.toml"
    config.write_text('workspaces = ["made"]\n[limits]\nrate = 0\n')
    monkeypatch.setenv("SELF_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("SELF_SERVE_CONFIG", str(config))
    app = from_environment()
    assert app.state["config"].limits.rate == 0 and Data(tmp_path / "data").names() == ["made"]
    monkeypatch.delenv("SELF_SERVE_CONFIG")
    assert from_environment().state["config"] == ServiceConfig()
    config.write_text("[limits]\nrte = 1\n")
    monkeypatch.setenv("SELF_SERVE_CONFIG", str(config))
    with pytest.raises(ConfigError, match=r"unknown key `limits.rte`"):
        from_environment()
