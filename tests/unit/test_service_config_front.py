"""The configuration of what sits in front of the service: `trusted_proxies` (whose
X-Forwarded-For and -Proto count), `[metrics]` (a token, a port of its own), and what
`self serve --log-level` / `--trusted-proxies` put over the file's values."""

from __future__ import annotations

import pytest

from service.server.api.config import (
    ConfigError,
    MetricsConfig,
    ServiceConfig,
    metrics_token,
    parse,
    with_options,
)


def test_proxies_and_metrics_are_read() -> None:
    raw = {
        "trusted_proxies": ["10.0.0.5", "10.1.0.0/16", "fd00::/8"],
        "metrics": {"token_env": "M", "port": 9765},
    }
    config = parse(raw, "f.toml")
    assert config.trusted_proxies == ("10.0.0.5", "10.1.0.0/16", "fd00::/8")
    assert config.metrics == MetricsConfig(token_env="M", port=9765)
    assert ServiceConfig().trusted_proxies == () and ServiceConfig().metrics == MetricsConfig(), (
        "none by default"
    )


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (
            {"trusted_proxies": ["10.0.0.300"]},
            "f.toml: trusted_proxies: '10.0.0.300' is no address or network",
        ),
        (
            {"trusted_proxies": ["proxy.local"]},
            "f.toml: trusted_proxies: 'proxy.local' is no address or network",
        ),
        ({"trusted_proxies": "10.0.0.1"}, "f.toml: trusted_proxies: expected `array`, got `str`"),
        ({"metrics": {"token_env": "metrics token"}}, "f.toml: metrics.token_env: 'metrics token' is not an"),
        ({"metrics": {"port": 70000}}, "f.toml: metrics.port: expected `int` <= 65535"),
        ({"metrics": {"token": "x"}}, "unknown key `metrics.token` (known here: token_env, port)"),
    ],
)
def test_a_bad_value_is_refused_in_one_line_that_says_what_to_give(raw: dict[str, object], said: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse(raw, "f.toml")
    assert said in str(refused.value) and "\n" not in str(refused.value), str(refused.value)


def test_the_command_line_puts_its_level_and_proxies_over_the_files() -> None:
    config = parse({"trusted_proxies": ["10.0.0.5"], "logging": {"level": "warning"}}, "f.toml")
    assert with_options(config) == config
    told = with_options(config, "debug", " 127.0.0.1 , 10.2.0.0/16 ")
    assert told.logging.level == "debug" and told.trusted_proxies == ("127.0.0.1", "10.2.0.0/16")
    assert with_options(config, proxies="").trusted_proxies == (), "an empty list trusts no peer"
    with pytest.raises(ConfigError, match=r"^--log-level: 'loud' is not one of debug, info, warning, error$"):
        with_options(config, "loud")
    with pytest.raises(ConfigError, match=r"^--trusted-proxies: 'nine' is no address or network"):
        with_options(config, proxies="10.0.0.1,nine")


def test_the_metrics_token_is_the_named_variables_value(monkeypatch: pytest.MonkeyPatch) -> None:
    assert metrics_token(ServiceConfig()) is None
    named = parse({"metrics": {"token_env": "SELFHUB_TEST_METRICS_TOKEN"}}, "f.toml")
    monkeypatch.delenv("SELFHUB_TEST_METRICS_TOKEN", raising=False)
    with pytest.raises(
        ConfigError, match=r"^metrics.token_env names SELFHUB_TEST_METRICS_TOKEN, which is not set"
    ):
        metrics_token(named)
    monkeypatch.setenv("SELFHUB_TEST_METRICS_TOKEN", "s3cret-scrape\n")
    assert metrics_token(named) == "s3cret-scrape"
