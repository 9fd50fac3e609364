"""`self serve --config FILE`: a TOML document read into `ServiceConfig`, every key with a
default, and a refusal that names the file and the dotted key for anything it does not take."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from service.core.problems import REFUSED, problem
from service.server.api.config import ConfigError, Limits, Logging, Remote, ServiceConfig, load, parse

FULL = """
workspaces = ["acme", "beta-2"]

[remotes.team-state]
url = "https://github.com/team/state.git"
webhook_secret_env = "TEAM_STATE_SECRET"
poll_s = 30

[remotes.ops]
url = "git@github.com:team/ops.git"

[limits]
body_bytes = 65536
rate = 2.5
burst = 7
request_s = 0.5
keep_alive_s = 3
shutdown_s = 4

[logging]
level = "debug"
format = "console"
"""


def test_no_file_and_an_empty_one_are_the_defaults() -> None:
    assert load(None) == parse({}, "empty.toml") == ServiceConfig()
    defaults = ServiceConfig().limits
    assert (defaults.body_bytes, defaults.rate, defaults.burst) == (1024 * 1024, 50.0, 200)
    assert (defaults.request_s, defaults.keep_alive_s, defaults.shutdown_s) == (60.0, 5, 10)
    assert ServiceConfig().logging == Logging("info", "json")
    assert ServiceConfig().workspaces == () and ServiceConfig().remotes == {}


def test_every_key_is_read() -> None:
    config = parse(tomllib.loads(FULL), "serve.toml")
    assert config == ServiceConfig(
        workspaces=("acme", "beta-2"),
        remotes={
            "team-state": Remote("https://github.com/team/state.git", "TEAM_STATE_SECRET", 30.0),
            "ops": Remote("git@github.com:team/ops.git", None, 60.0),
        },
        limits=Limits(body_bytes=65536, rate=2.5, burst=7, request_s=0.5, keep_alive_s=3, shutdown_s=4),
        logging=Logging(level="debug", format="console"),
    )


def test_a_table_given_in_part_keeps_the_other_defaults() -> None:
    config = parse({"limits": {"burst": 3}}, "serve.toml")
    assert config.limits == Limits(burst=3)
    assert config.logging == Logging()


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"limit": {"rate": 1}}, "`limit`"),
        ({"limits": {"bodybytes": 10}}, "`limits.bodybytes`"),
        ({"logging": {"colour": True}}, "`logging.colour`"),
        ({"limits": {"rate": 1.0, "token": "shb_x"}}, "`limits.token`"),
        ({"remotes": {"acme": {"url": "git://h/a.git", "secret": "x"}}}, "`remotes.acme.secret`"),
    ],
)
def test_an_unknown_key_is_refused_by_its_dotted_name_and_the_file(raw: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(raw, "/etc/selfhub/serve.toml")
    message = str(caught.value)
    assert message.startswith("/etc/selfhub/serve.toml: unknown key ") and key in message, message
    assert "known here:" in message


def test_the_known_keys_of_the_table_are_listed() -> None:
    with pytest.raises(ConfigError, match=r"known here: level, format\)$"):
        parse({"logging": {"levle": "info"}}, "f.toml")
    with pytest.raises(
        ConfigError,
        match=r"known here: workspaces, remotes, limits, logging, trusted_proxies, metrics, identity, "
        r"replication\)$",
    ):
        parse({"workspace": ["acme"]}, "f.toml")
    with pytest.raises(ConfigError, match=r"known here: url, webhook_secret_env, poll_s\)$"):
        parse({"remotes": {"acme": {"url": "git://h/a.git", "poll": 5}}}, "f.toml")


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ({"limits": {"rate": -1}}, "f.toml: limits.rate: expected `float` >= 0"),
        ({"limits": {"burst": 0}}, "f.toml: limits.burst: expected `int` >= 1"),
        ({"limits": {"body_bytes": "1M"}}, "f.toml: limits.body_bytes: expected `int`, got `str`"),
        ({"logging": {"format": "xml"}}, "f.toml: logging.format: invalid enum value 'xml'"),
        ({"logging": {"level": "loud"}}, "f.toml: logging.level: invalid enum value 'loud'"),
        ({"workspaces": "acme"}, "f.toml: workspaces: expected `array`, got `str`"),
        ({"workspaces": ["Acme Corp"]}, "f.toml: workspaces: 'Acme Corp' is not a valid workspace name"),
        ({"limits": []}, "f.toml: limits: expected `object`, got `array`"),
        ({"remotes": ["acme"]}, "f.toml: remotes: expected `object`, got `array`"),
        ({"remotes": {"acme": "git://h/a.git"}}, "f.toml: remotes.acme: expected `object`, got `str`"),
        ({"remotes": {"acme": {}}}, "f.toml: remotes.acme: object missing required field `url`"),
        ({"remotes": {"acme": {"url": 7}}}, "f.toml: remotes.acme.url: expected `str`, got `int`"),
        (
            {"remotes": {"acme": {"url": "git://h/a.git", "poll_s": -1}}},
            "f.toml: remotes.acme.poll_s: expected `float` >= 0",
        ),
        (
            {"remotes": {"acme": {"url": "git://h/a.git", "poll_s": float("nan")}}},
            "f.toml: remotes.acme.poll_s: expected `float` >= 0",
        ),
        (
            {"remotes": {"acme": {"url": "git://h/a.git", "webhook_secret_env": 1}}},
            "f.toml: remotes.acme.webhook_secret_env: expected `str | null`, got `int`",
        ),
        (
            {"remotes": {"acme": {"url": "git://h/a.git", "webhook_secret_env": "MY SECRET"}}},
            "f.toml: remotes.acme.webhook_secret_env: 'MY SECRET' is not an environment variable name",
        ),
        (
            {"remotes": {"acme": {"url": "git://h/a.git", "webhook_secret_env": "HOOK_PREVIOUS"}}},
            "f.toml: remotes.acme.webhook_secret_env: 'HOOK_PREVIOUS' is not an environment variable",
        ),
        (
            {"remotes": {"acme": {"url": "ftp://h/a.git"}}},
            "f.toml: remotes.acme.url: ftp://h/a.git: unknown scheme",
        ),
        ({"remotes": {"acme": {"url": " "}}}, "f.toml: remotes.acme.url: give the remote's URL or path"),
        (
            {"remotes": {"Acme": {"url": "git://h/a.git"}}},
            "f.toml: remotes: 'Acme' is not a valid workspace name",
        ),
        (
            {"workspaces": ["acme"], "remotes": {"acme": {"url": "git://h/a.git"}}},
            "f.toml: remotes.acme: acme is in `workspaces` too",
        ),
    ],
)
def test_a_value_of_the_wrong_kind_is_refused_by_its_key(raw: dict[str, object], said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(raw, "f.toml")
    assert str(caught.value).startswith(said), str(caught.value)


def test_a_refused_configuration_is_a_refusal_exit_2() -> None:
    assert ConfigError.code == "config" and problem("config").exit == REFUSED == 2


@pytest.mark.parametrize(
    "url",
    [
        "https://bot:tok-0123456789@github.com/team/state.git",
        "https://ghp_0123456789abcdefghij0123456789abcdef@github.com/team/state.git",
        "https://github.com/team/state.git?access_token=tok-0123456789",
    ],
)
def test_a_remote_url_carrying_a_credential_is_refused_without_repeating_it(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse({"remotes": {"acme": {"url": url}}}, "f.toml")
    message = str(caught.value)
    assert message.startswith("f.toml: remotes.acme.url: ") and "SELF_TOKEN" in message, message
    assert "tok-0123456789" not in message and "ghp_0123456789" not in message


def test_a_remote_on_a_relative_path_is_taken_from_the_files_folder(tmp_path: Path) -> None:
    config = tmp_path / "etc" / "serve.toml"
    config.parent.mkdir()
    config.write_text('[remotes.acme]\nurl = "../git/acme.git"\n')
    assert load(config).remotes["acme"].url == str(tmp_path / "git" / "acme.git")
