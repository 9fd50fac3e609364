"""The identity database's URL in the service's configuration: the file's `identity` key, or
`--identity` (`SELF_IDENTITY`) over it; anything but a postgresql:// URL refused by its source."""

from __future__ import annotations

import pytest

from service.server.api.config import ConfigError, ServiceConfig, parse, with_options

URL = "postgresql://selfhub@db:5432/selfhub"


def test_no_identity_is_the_data_directorys() -> None:
    assert ServiceConfig().identity is None
    assert with_options(ServiceConfig()).identity is None


def test_the_flag_is_taken_over_the_file() -> None:
    from_file = parse({"identity": "postgres://other@db/x"}, "serve.toml")
    assert from_file.identity == "postgres://other@db/x"
    assert with_options(from_file, identity=URL).identity == URL
    assert with_options(from_file).identity == "postgres://other@db/x"


@pytest.mark.parametrize("url", ["mysql://db/x", "sqlite:///auth.sqlite", "db:5432", ""])
def test_an_identity_that_is_no_postgresql_url_is_refused_by_its_source(url: str) -> None:
    with pytest.raises(ConfigError, match=r"^serve.toml: identity: give a postgresql://"):
        parse({"identity": url}, "serve.toml")
    if url:
        with pytest.raises(ConfigError, match=r"^--identity: give a postgresql://"):
            with_options(ServiceConfig(), identity=url)
