"""The service's configuration on a real data directory: what `build` makes of it, and the
app an ASGI server starts by import string (`SELF_DATA`, `SELF_SERVE_CONFIG`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.adapters.data.backends import Backend
from service.adapters.data.workspaces import Data
from service.server.api.config import ConfigError, ServiceConfig, parse
from service.server.bootstrap import build, from_environment

# litestar 2.25 warns, building the app, that the routes declare path parameters in the
# inferred style (service/server/api/routes.py, writes.py, stream.py): theirs to move, not this test's
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
    observer = app.state["hub"].observer
    assert observer.counts is app.state["metrics"], "commits and fold lag are counted"
    assert observer.mirrors is app.state["mirrors"], "an outside write asks for a mirror round"


def remotes(**tables: dict[str, object]) -> ServiceConfig:
    return parse({"remotes": tables, "workspaces": ["plain"]}, "serve.toml")


def test_build_records_the_configurations_remotes_for_the_start_to_clone(tmp_path: Path) -> None:
    data = Data(tmp_path / "data")
    config = remotes(acme={"url": "git://git.example/acme.git", "webhook_secret_env": "ACME_HOOK"})
    app = build(data.root, config)
    assert data.backends.get("acme") == Backend("git://git.example/acme.git", "ACME_HOOK", 60.0)
    assert not data.has("acme"), "cloned as the service starts (Mirrors.prepare), not by build"
    assert app.state["mirrors"].backend("acme") == data.backends.get("acme")
    assert data.names() == ["plain"]


def test_a_remote_already_mirrored_takes_the_configurations_settings(tmp_path: Path) -> None:
    data = Data(tmp_path / "data")
    data.backends.put("acme", Backend("git://git.example/acme.git", None, 60.0))
    build(data.root, remotes(acme={"url": "git://git.example/acme.git", "poll_s": 5}))
    assert data.backends.get("acme") == Backend("git://git.example/acme.git", None, 5.0)


@pytest.mark.parametrize("held", ["hosted", "another-url"])
def test_a_remote_data_holds_otherwise_is_refused_and_nothing_is_written(tmp_path: Path, held: str) -> None:
    data = Data(tmp_path / "data")
    if held == "hosted":
        data.add("acme")
    else:
        data.backends.put("acme", Backend("git://git.example/other.git"))
    before = data.backends.get("acme")
    config = remotes(
        acme={"url": "git://git.example/acme.git", "poll_s": 1}, beta={"url": "git://git.example/b.git"}
    )
    with pytest.raises(
        ConfigError, match=r"^remotes\.acme: workspace acme in|^remotes\.acme: workspace acme is"
    ):
        build(data.root, config)
    assert data.backends.get("acme") == before and data.backends.get("beta") is None
    assert "plain" not in data.names(), "nothing made from a refused configuration"


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
