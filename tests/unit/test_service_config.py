"""`self serve --config FILE`: a TOML document read into `ServiceConfig`, every key with a
default, and a refusal that names the file and the dotted key for anything it does not take."""

from __future__ import annotations

import tomllib

import pytest

from service.api.config import ConfigError, Limits, Logging, ServiceConfig, load, parse
from service.model.problems import REFUSED, problem

FULL = """
workspaces = ["acme", "beta-2"]

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
    assert ServiceConfig().workspaces == ()


def test_every_key_is_read() -> None:
    config = parse(tomllib.loads(FULL), "serve.toml")
    assert config == ServiceConfig(
        workspaces=("acme", "beta-2"),
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
    with pytest.raises(ConfigError, match=r"known here: workspaces, limits, logging\)$"):
        parse({"workspace": ["acme"]}, "f.toml")


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
    ],
)
def test_a_value_of_the_wrong_kind_is_refused_by_its_key(raw: dict[str, object], said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(raw, "f.toml")
    assert str(caught.value).startswith(said), str(caught.value)


def test_a_refused_configuration_is_a_refusal_exit_2() -> None:
    assert ConfigError.code == "config" and problem("config").exit == REFUSED == 2
