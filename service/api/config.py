"""The service's configuration: `self serve --config FILE`, a TOML file (stdlib `tomllib`)
read into `ServiceConfig`; every key has a default, so no file is the defaults. A key the
structs do not have is refused with its dotted name and the file, before anything binds.

    workspaces = ["acme"]          # made in DATA at start when missing

    [limits]
    body_bytes = 1048576           # a request body's cap (413 above it)
    rate = 50.0                    # requests a second per token (0: no limit)
    burst = 200                    # requests a token may make at once
    request_s = 60.0               # a handler's time to answer (0: none); 503 past it
    keep_alive_s = 5               # an idle keep-alive connection is closed after it
    shutdown_s = 10                # SIGTERM: requests in flight get this long

    [logging]
    level = "info"                 # debug | info | warning | error
    format = "json"                # json | console
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from service.api.errors import ApiError

Positive = Annotated[int, msgspec.Meta(ge=1)]
Seconds = Annotated[float, msgspec.Meta(ge=0)]
WholeSeconds = Annotated[int, msgspec.Meta(ge=0)]


class Limits(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    body_bytes: Positive = 1024 * 1024  # a command is a few kilobytes
    rate: Seconds = 50.0
    burst: Positive = 200
    request_s: Seconds = 60.0  # past the writes' own 30 s (service/api/writes.py), a backstop
    keep_alive_s: WholeSeconds = 5
    shutdown_s: WholeSeconds = 10


class Logging(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["json", "console"] = "json"


class ServiceConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    workspaces: tuple[str, ...] = ()
    limits: Limits = Limits()
    logging: Logging = Logging()


class ConfigError(ApiError):
    """The configuration file cannot be read or holds what the service does not take."""

    code = "config"
    title = "The service's configuration is refused"


_WHERE = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<key>[^`]*)`$")


def load(path: Path | None) -> ServiceConfig:
    """The configuration in `path`, or the defaults when there is none."""
    if path is None:
        return ServiceConfig()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: is not TOML ({exc})") from None
    return parse(raw, str(path))


def parse(raw: dict[str, Any], source: str) -> ServiceConfig:
    """`raw` (a TOML document) as a ServiceConfig; `source` names it in a refusal."""
    from service.model.errors import Invalid
    from service.model.team import valid_name

    try:
        config = msgspec.convert(raw, ServiceConfig)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{source}: {_explained(str(exc))}") from None
    for name in config.workspaces:
        try:
            valid_name("workspace", name)
        except Invalid as exc:
            raise ConfigError(f"{source}: workspaces: {exc.detail()}") from None
    return config


def _explained(message: str) -> str:
    """msgspec's `… - at `$.limits`` as `unknown key `limits.x``, or `limits.rate: …`."""
    found = _WHERE.match(message)
    what, path = (found["what"], found["path"] or "") if found else (message, "")
    dotted = path.lstrip(".")
    unknown = _UNKNOWN.match(what)
    if unknown:
        key = f"{dotted}.{unknown['key']}" if dotted else unknown["key"]
        return f"unknown key `{key}` (known here: {', '.join(_known(dotted))})"
    return f"{dotted}: {what[0].lower()}{what[1:]}" if dotted else what


def _known(dotted: str) -> list[str]:
    """The keys of the table at `dotted` (`` for the top level)."""
    kind: Any = ServiceConfig
    for part in filter(None, dotted.split(".")):
        kind = next(f.type for f in msgspec.structs.fields(kind) if f.name == part)
    return [f.name for f in msgspec.structs.fields(kind)]
