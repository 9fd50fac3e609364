"""The credentials file as `self login` keeps it (on a real folder): login entries beside the
entries written by hand, the mode it is written with, lookups by URL; secrets read from a
file a `NAME_FILE` variable names (the CLI's token, the webhook secrets of the service); and
the name `self config user` keeps."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from service.adapters.data.backends import Backend
from service.adapters.data.workspaces import Data
from service.adapters.sync import credentials, person
from service.adapters.sync.credentials import Login
from service.adapters.sync.errors import SyncError
from service.app.login import service_url, valid_author
from service.core.errors import Invalid
from service.server.api.config import ConfigError, metrics_token, parse
from service.server.api.hooks import secrets_of
from service.server.bootstrap import build

pytestmark = pytest.mark.filterwarnings("ignore:.*declared using deprecated inferred style")
SERVICE = "http://127.0.0.1:8765"


@pytest.fixture(autouse=True)
def own_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in (
        "SELF_TOKEN",
        "SELF_TOKEN_FILE",
        "SELF_GIT_PASSWORD",
        "SELF_GIT_PASSWORD_FILE",
        "SELF_CREDENTIALS",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config" / "selfhub"


def test_a_login_is_kept_with_mode_0600_beside_entries_written_by_hand(own_config: Path) -> None:
    own_config.mkdir(parents=True)
    by_hand = {"https://git.example/team": {"username": "u", "token": "hand-token"}}
    (own_config / "credentials").write_text(json.dumps(by_hand))
    (own_config / "credentials").chmod(0o600)

    credentials.save_login(Login(SERVICE, "ann", "acme", "writer"), "shb_ann")
    path = own_config / "credentials"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    table = json.loads(path.read_text())
    assert table["https://git.example/team"] == by_hand["https://git.example/team"]
    assert credentials.logins() == [Login(SERVICE, "ann", "acme", "writer")]

    found = credentials.lookup(f"{SERVICE}/git/acme.git")
    assert found is not None and (found.username, found.token) == ("selfhub", "shb_ann")
    assert credentials.login_for(f"{SERVICE}/git/acme.git") == Login(SERVICE, "ann", "acme", "writer")
    assert credentials.login_for("https://git.example/team/ws.git") is None  # no login there
    assert credentials.login_for("http://127.0.0.1:9999/git/acme.git") is None

    assert credentials.forget(SERVICE) and not credentials.forget(SERVICE)
    assert credentials.logins() == []
    assert set(json.loads(path.read_text())) == {"https://git.example/team"}


def test_a_new_credentials_file_is_made_0600_in_a_0700_folder(own_config: Path) -> None:
    credentials.save_login(Login(SERVICE, "ann", "acme", "reader"), "shb_x")
    assert stat.S_IMODE((own_config / "credentials").stat().st_mode) == 0o600
    assert stat.S_IMODE(own_config.stat().st_mode) == 0o700
    assert [p.name for p in own_config.iterdir()] == ["credentials"], "no temporary file left"


def test_a_credentials_file_others_may_read_is_refused_before_a_login_is_kept(own_config: Path) -> None:
    own_config.mkdir(parents=True)
    (own_config / "credentials").write_text("{}")
    (own_config / "credentials").chmod(0o644)
    with pytest.raises(SyncError, match="readable by others"):
        credentials.save_login(Login(SERVICE, "ann", "acme", "writer"), "shb_ann")


def test_a_secret_comes_from_its_variable_else_the_file_its_file_variable_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "secret"
    secret.write_text("from-the-file\n")
    assert credentials.from_env("SELF_TOKEN") is None
    monkeypatch.setenv("SELF_TOKEN_FILE", str(secret))
    assert credentials.from_env("SELF_TOKEN") == "from-the-file"  # one trailing newline dropped
    found = credentials.lookup("https://git.example/x.git")
    assert found is not None and found.token == "from-the-file"
    monkeypatch.setenv("SELF_TOKEN", "from-the-variable")
    assert credentials.from_env("SELF_TOKEN") == "from-the-variable"

    monkeypatch.delenv("SELF_TOKEN")
    monkeypatch.setenv("SELF_TOKEN_FILE", str(tmp_path / "absent"))
    with pytest.raises(SyncError, match=r"SELF_TOKEN_FILE=.*absent cannot be read \(No such file"):
        credentials.from_env("SELF_TOKEN")


def test_webhook_secrets_come_from_files_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "now").write_text("new-secret\n")
    (tmp_path / "before").write_text("old-secret")
    monkeypatch.setenv("ACME_HOOK_FILE", str(tmp_path / "now"))
    monkeypatch.setenv("ACME_HOOK_PREVIOUS_FILE", str(tmp_path / "before"))
    backend = Backend("git://git.example/acme.git", "ACME_HOOK")
    assert secrets_of(backend) == [b"new-secret", b"old-secret"]


def test_the_metrics_token_comes_from_a_file_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    named = parse({"metrics": {"token_env": "SELFHUB_TEST_METRICS"}}, "serve.toml")
    monkeypatch.delenv("SELFHUB_TEST_METRICS", raising=False)
    (tmp_path / "metrics").write_text("scrape-token\n")
    monkeypatch.setenv("SELFHUB_TEST_METRICS_FILE", str(tmp_path / "metrics"))
    assert metrics_token(named) == "scrape-token"
    monkeypatch.setenv("SELFHUB_TEST_METRICS_FILE", str(tmp_path / "absent"))
    with pytest.raises(
        ConfigError, match=r"^metrics\.token_env: SELFHUB_TEST_METRICS_FILE=.*absent cannot be read"
    ):
        metrics_token(named)


def test_a_configured_remote_whose_secret_file_cannot_be_read_stops_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_HOOK_FILE", str(tmp_path / "absent"))
    config = parse(
        {"remotes": {"acme": {"url": "git://git.example/acme.git", "webhook_secret_env": "ACME_HOOK"}}},
        "serve.toml",
    )
    data = Data(tmp_path / "data")
    with pytest.raises(ConfigError, match=r"remotes\.acme: ACME_HOOK_FILE=.*absent cannot be read"):
        build(data.root, config)
    assert data.backends.get("acme") is None, "nothing written"


def test_the_configured_user_name_is_kept_outside_every_store(own_config: Path) -> None:
    assert person.configured_user() is None
    person.keep_user("ada")
    assert json.loads((own_config / "user.json").read_text()) == {"user": "ada"}
    assert person.configured_user() == "ada"
    person.keep_user(None)
    assert person.configured_user() is None
    own_config.joinpath("user.json").write_text("not json")
    with pytest.raises(SyncError, match=r"user\.json is not a JSON object"):
        person.configured_user()


@pytest.mark.parametrize(
    ("given", "base"),
    [
        ("http://127.0.0.1:8765", SERVICE),
        ("http://127.0.0.1:8765/", SERVICE),
        ("HTTP://127.0.0.1:8765/git/acme.git", SERVICE),
        ("http://127.0.0.1:8765/mcp", SERVICE),
        ("https://team.example/selfhub/git/acme.git", "https://team.example/selfhub"),
    ],
)
def test_any_url_on_a_service_names_the_service(given: str, base: str) -> None:
    assert service_url(given) == base


@pytest.mark.parametrize("given", ["ftp://host/x", "127.0.0.1:8765", "http://"])
def test_what_is_no_service_url_is_refused(given: str) -> None:
    with pytest.raises(Invalid, match="not a service URL"):
        service_url(given)


def test_a_service_url_with_a_credential_is_refused() -> None:
    with pytest.raises(SyncError):
        service_url("http://ann:shb_secret@127.0.0.1:8765")


@pytest.mark.parametrize("name", ["ada", "Grace Hopper", "ann-2"])
def test_a_handle_signs(name: str) -> None:
    assert valid_author(f" {name} ") == name


@pytest.mark.parametrize(
    ("name", "why"),
    [("", "1 to 64"), ("x" * 65, "1 to 64"), ("ada@example.com", "email"), ("/home/ada", "path")],
)
def test_what_is_no_handle_is_refused(name: str, why: str) -> None:
    with pytest.raises(Invalid, match=why):
        valid_author(name)
