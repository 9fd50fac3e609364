"""The service's configuration: `self serve --config FILE`, a TOML file (stdlib `tomllib`)
read into `ServiceConfig`; every key has a default, so no file is the defaults. A key the
structs do not have is refused with its dotted name and the file, before anything binds.
A remote's URL is checked as `self admin workspace add --remote` checks it (a credential in it
refused, a relative path taken from the file's folder), and so is the variable's name.

    workspaces = ["acme"]          # made in DATA at start when missing
    trusted_proxies = ["10.0.0.0/8"]   # peers whose X-Forwarded-For and -Proto count (none: no peer's)
    identity = "postgresql://selfhub@db/selfhub"   # users and tokens there (none: DATA/auth.sqlite)

    [remotes.team-state]           # a workspace mirroring a git remote (docs/team-service.md)
    url = "https://github.com/team/state.git"   # no credential: SELF_TOKEN or the credentials file
    webhook_secret_env = "TEAM_STATE_WEBHOOK_SECRET"   # the variable holding the secret (optional)
    poll_s = 60                    # seconds between polls of the remote (0: none)

    [limits]
    body_bytes = 1048576           # a request body's cap (413 above it)
    rate = 50.0                    # requests a second per token (0: no limit)
    burst = 200                    # requests a token may make at once
    request_s = 60.0               # a handler's time to answer (0: none); 503 past it
    keep_alive_s = 5               # an idle keep-alive connection is closed after it
    header_s = 10.0                # a request's headers must arrive within it, else closed (0: none)
    connections = 4096             # connections open at once (0: no cap); 503 past it
    connections_per_client = 256   # of them from one address (0: no cap); 503 past it
    shutdown_s = 10                # SIGTERM: requests in flight get this long

    [logging]
    level = "info"                 # debug | info | warning | error
    format = "json"                # json | console

    [metrics]
    token_env = "SELFHUB_METRICS_TOKEN"  # /metrics asks for this variable's value as a bearer token
    port = 9765                    # /metrics on this port of the same host only (0: the service's)
"""

from __future__ import annotations

import re
import tomllib
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from service.server.api.errors import ApiError

Positive = Annotated[int, msgspec.Meta(ge=1)]
Seconds = Annotated[float, msgspec.Meta(ge=0)]
WholeSeconds = Annotated[int, msgspec.Meta(ge=0)]
Count = Annotated[int, msgspec.Meta(ge=0)]
Level = Literal["debug", "info", "warning", "error"]
LEVELS: tuple[str, ...] = typing.get_args(Level)


class Limits(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    body_bytes: Positive = 1024 * 1024  # a command is a few kilobytes
    rate: Seconds = 50.0
    burst: Positive = 200
    request_s: Seconds = 60.0  # past the writes' own 30 s (service/server/api/writes.py), a backstop
    keep_alive_s: WholeSeconds = 5
    shutdown_s: WholeSeconds = 10
    header_s: Seconds = 10.0  # a person's slowest link sends headers in well under a second
    connections: Count = 4096  # 0: no cap; well under the descriptors a process may hold
    connections_per_client: Count = 256  # 0: no cap; behind a proxy every client is the proxy


class Logging(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    level: Level = "info"
    format: Literal["json", "console"] = "json"


class MetricsConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Who may read `/metrics`: anyone who reaches it (the default), the holders of the token in
    the variable `token_env`, or whoever reaches a port of its own (`port`, on the same host)."""

    token_env: str | None = None
    port: Annotated[int, msgspec.Meta(ge=0, le=65535)] = 0


class Replication(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """`self serve --replicated`: a write to a remote-backed workspace is answered once its
    backend has it (`server/live/writer.py`); a read naming `Selfhub-Min-Commit` waits up to
    `wait_s` for this instance to hold that commit (`server/mirror/fresh.py`)."""

    replicated: bool = False
    wait_s: Seconds = 5.0


class Remote(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A workspace that mirrors a git remote: `self admin workspace add NAME --remote URL
    --webhook-secret-env VAR --poll S` as configuration (`DATA/backends/NAME.json` at start)."""

    url: str
    webhook_secret_env: str | None = None
    poll_s: Seconds = 60.0  # the default of `--poll` (service/adapters/data/backends.py)


class ServiceConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    workspaces: tuple[str, ...] = ()
    remotes: dict[str, Remote] = msgspec.field(default_factory=dict)
    limits: Limits = Limits()
    logging: Logging = Logging()
    trusted_proxies: tuple[str, ...] = ()  # addresses or networks (CIDR): service/server/run.py
    metrics: MetricsConfig = MetricsConfig()
    identity: str | None = None  # a postgresql:// URL: users and tokens there (else DATA/auth.sqlite)
    replication: Replication = Replication()


class ConfigError(ApiError):
    """The configuration file cannot be read or holds what the service does not take."""

    code = "config"


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
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
    return parse(raw, str(path), path.resolve().parent)


def parse(raw: dict[str, Any], source: str, base: Path | None = None) -> ServiceConfig:
    """`raw` (a TOML document) as a ServiceConfig; `source` names it in a refusal, `base` is
    the folder a remote's relative path is taken from (the working directory without)."""
    from service.core.commands.team import valid_name
    from service.core.errors import Invalid

    tables = raw.get("remotes")
    if isinstance(tables, dict):  # msgspec names no key of a table of tables: each on its own
        for name, table in tables.items():
            try:
                valid_name("workspace", name)
            except Invalid as exc:
                raise ConfigError(f"{source}: remotes: {exc.detail()}") from None
            try:
                msgspec.convert(table, Remote)
            except msgspec.ValidationError as exc:
                raise ConfigError(f"{source}: {_explained(str(exc), f'remotes.{name}')}") from None
    try:
        config = msgspec.convert(raw, ServiceConfig)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{source}: {_explained(str(exc))}") from None
    for name in config.workspaces:
        try:
            valid_name("workspace", name)
        except Invalid as exc:
            raise ConfigError(f"{source}: workspaces: {exc.detail()}") from None
    if config.remotes:
        config = msgspec.structs.replace(config, remotes=_checked(config, source, base))
    _check_proxies(config.trusted_proxies, f"{source}: trusted_proxies")
    _check_metrics(config.metrics, f"{source}: metrics")
    _check_identity(config.identity, f"{source}: identity")
    return config


def _check_proxies(proxies: tuple[str, ...], where: str) -> None:
    import ipaddress

    for given in proxies:
        try:
            ipaddress.ip_network(given, strict=False)
        except ValueError:
            raise ConfigError(
                f"{where}: {given!r} is no address or network; give one as 10.0.0.5 or 10.0.0.0/8"
            ) from None


def _check_metrics(metrics: MetricsConfig, where: str) -> None:
    if metrics.token_env is not None and not _ENV_NAME.fullmatch(metrics.token_env):
        raise ConfigError(
            f"{where}.token_env: {metrics.token_env!r} is not an environment variable's name; "
            "use letters, digits and underscores (SELFHUB_METRICS_TOKEN, say)"
        )


def with_options(
    config: ServiceConfig, level: str | None = None, proxies: str | None = None, identity: str | None = None
) -> ServiceConfig:
    """`config` with what `self serve` was told on its command line (or in its environment):
    a log level, the trusted proxies as one comma-separated list (an empty one: none), the
    identity database's URL (`--identity`, `SELF_IDENTITY`)."""
    if level is not None:
        if level not in LEVELS:
            raise ConfigError(f"--log-level: {level!r} is not one of {', '.join(LEVELS)}")
        logging = msgspec.structs.replace(config.logging, level=typing.cast(Level, level))
        config = msgspec.structs.replace(config, logging=logging)
    if proxies is not None:
        listed = tuple(p.strip() for p in proxies.split(",") if p.strip())
        _check_proxies(listed, "--trusted-proxies")
        config = msgspec.structs.replace(config, trusted_proxies=listed)
    if identity:
        _check_identity(identity, "--identity")
        config = msgspec.structs.replace(config, identity=identity)
    return config


def _check_identity(url: str | None, where: str) -> None:
    if url is not None and not url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(
            f"{where}: give a postgresql://USER@HOST:PORT/DATABASE URL, or none for DATA/auth.sqlite"
        )


def metrics_token(config: ServiceConfig) -> str | None:
    """The token `/metrics` asks for: the value of the variable `metrics.token_env` names, or of
    the file `NAME_FILE` names (`credentials.from_env`); none without the key; a ConfigError
    when neither is set, or the file cannot be read."""
    from service.adapters.sync.credentials import from_env
    from service.adapters.sync.errors import SyncError

    name = config.metrics.token_env
    if name is None:
        return None
    try:
        value = (from_env(name) or "").strip()
    except SyncError as exc:
        raise ConfigError(f"metrics.token_env: {exc}") from None
    if not value:
        raise ConfigError(
            f"metrics.token_env names {name}, which is not set (nor {name}_FILE); set it, or remove the key"
        )
    return value


def _checked(config: ServiceConfig, source: str, base: Path | None) -> dict[str, Remote]:
    """Each remote with its URL as a backend record keeps it, once the URL and the variable's
    name pass the checks `self admin workspace add --remote` makes."""
    from service.adapters.data.backends import BadBackend, check_env_name
    from service.app.team import remote_url

    checked: dict[str, Remote] = {}
    for name, remote in config.remotes.items():
        where = f"{source}: remotes.{name}"
        if name in config.workspaces:
            raise ConfigError(
                f"{where}: {name} is in `workspaces` too, which makes a workspace the service "
                "hosts itself; a workspace is hosted or a mirror of a remote: keep one"
            )
        try:
            url = remote_url(remote.url, base)
        except ValueError as exc:
            raise ConfigError(f"{where}.url: {exc}") from None
        if remote.webhook_secret_env is not None:
            try:
                check_env_name(remote.webhook_secret_env)
            except BadBackend as exc:
                raise ConfigError(f"{where}.webhook_secret_env: {exc}") from None
        checked[name] = msgspec.structs.replace(remote, url=url)
    return checked


def _explained(message: str, within: str = "") -> str:
    """msgspec's `… - at `$.limits`` as `unknown key `limits.x``, or `limits.rate: …`;
    `within`, the dotted key of the table converted (`remotes.acme`)."""
    found = _WHERE.match(message)
    what, path = (found["what"], found["path"] or "") if found else (message, "")
    dotted = ".".join(filter(None, [within, path.lstrip(".")]))
    unknown = _UNKNOWN.match(what)
    if unknown:
        key = f"{dotted}.{unknown['key']}" if dotted else unknown["key"]
        return f"unknown key `{key}` (known here: {', '.join(_known(dotted))})"
    return f"{dotted}: {what[0].lower()}{what[1:]}" if dotted else what


def _known(dotted: str) -> list[str]:
    """The keys of the table at `dotted` (`` for the top level)."""
    kind: Any = ServiceConfig
    for part in filter(None, dotted.split(".")):
        if typing.get_origin(kind) is dict:  # a table of tables: `part` is one of its keys
            kind = typing.get_args(kind)[1]
            continue
        kind = next(f.type for f in msgspec.structs.fields(kind) if f.name == part)
    return [f.name for f in msgspec.structs.fields(kind)]
