"""The composition root: the litestar app of a data directory, wired from its parts — the live
workspaces (`service/server/live`), the search index, the mirrors of remote-backed workspaces, the
`/api/v1` routes, health and readiness, the git endpoint and webhooks (`service/server/api`), the web
view (`service/server/web`) — with one problem-document answer for every error, a request body cap,
and its operations (its configuration, `/metrics`, a log line per request, the rate limit,
the time limit)."""

from __future__ import annotations

import gc
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from litestar import Litestar
from litestar.datastructures import State

from service.adapters.data.workspaces import Data
from service.adapters.index.shared import SharedIndex
from service.server.api import logs, openapi
from service.server.api.config import ConfigError, ServiceConfig
from service.server.api.errors import problem_response
from service.server.api.git import ROUTES as GIT
from service.server.api.grants import Grants
from service.server.api.health import healthz, readyz
from service.server.api.hooks import ROUTES as HOOKS
from service.server.api.hooks import Deliveries
from service.server.api.limits import Limiter
from service.server.api.metrics import Metrics, metrics
from service.server.api.observe import Observe
from service.server.api.routes import ROUTES
from service.server.api.search import SEARCH_ROUTES
from service.server.api.stream import ROUTES as STREAMS
from service.server.api.whoami import ROUTES as WHOAMI
from service.server.api.writes import ROUTES as WRITES
from service.server.live.hub import Hub
from service.server.mcp import ROUTES as MCP
from service.server.mcp import Mcp
from service.server.mirror.mirrors import Mirrors, Peers, Told
from service.server.mirror.replicated import Replicated, Turns
from service.server.web import templating
from service.server.web.routes import ROUTER as VIEW

if TYPE_CHECKING:
    from service.adapters.auth.port import Identity


def load(
    hub: Hub, ready: threading.Event, index: SharedIndex | None = None, mirrors: Mirrors | None = None
) -> None:
    """Clone the remote-backed workspaces that have no store yet, fold every workspace's logs
    into memory and bring the search index up to each; then ready."""
    if mirrors is not None:
        mirrors.prepare()
    hub.open_all()
    if index is not None:
        index.refresh_all()
    # The folded states are millions of long-lived objects: kept out of the collector's
    # full passes, which would otherwise stop every request for a tenth of a second.
    gc.collect()
    gc.freeze()
    ready.set()


def declare(data: Data, config: ServiceConfig) -> None:
    """The backend record of each of the configuration's `[remotes.NAME]` in DATA (a missing
    store is cloned by `Mirrors.prepare` as the service starts); a ConfigError, before anything
    binds or is written, when DATA holds one of them otherwise."""
    from service.adapters.sync.credentials import from_env
    from service.adapters.sync.errors import SyncError
    from service.app.team import declared_backend

    records = []
    for name, remote in config.remotes.items():
        try:
            found = declared_backend(data, name, remote.url, remote.webhook_secret_env, remote.poll_s)
            if remote.webhook_secret_env is not None:
                from_env(remote.webhook_secret_env)  # VAR_FILE readable, if named
        except (ValueError, SyncError) as exc:
            raise ConfigError(f"remotes.{name}: {exc}") from None
        if found is not None:
            records.append((name, found))
    for name, backend in records:
        data.backends.put(name, backend)


def _peers(config: ServiceConfig, log: Any) -> Peers | None:
    """The cluster on the identity database (`--identity`), when one is configured: several
    instances then announce their changes to one another and poll on one leader."""
    if config.identity is None:
        return None
    from service.adapters.cluster import Cluster

    return Cluster(config.identity, log)


def _turns(config: ServiceConfig, log: Any) -> Turns | None:
    """The instances' turns at pushing a workspace (`--replicated` on the identity database)."""
    if config.identity is None:
        return None
    from service.adapters.cluster.turns import Turns as OnDatabase

    return OnDatabase(config.identity, log)


def _identity(data: Data, config: ServiceConfig, log: Any) -> Identity:
    """The users and tokens the guard asks on every request: in the PostgreSQL database
    `--identity` names, migrated now (a newer schema refused before anything binds; a database
    away is logged and dialled again by the first request), else in DATA/auth.sqlite."""
    from service.adapters.auth.choose import identity
    from service.adapters.auth.errors import IdentityUnavailable
    from service.adapters.auth.postgres import PgIdentity

    found = identity(data, config.identity)
    if isinstance(found, PgIdentity):
        try:
            found.check()
        except IdentityUnavailable as exc:
            log.warning("identity-unavailable", error=str(exc))
    return found


def build(root: Path, config: ServiceConfig | None = None, log_to: TextIO | None = None) -> Litestar:
    """The app of data directory `root`; its log lines go to `log_to` (stderr)."""
    config = config or ServiceConfig()
    data = Data(root)
    log = logs.logger(config.logging, log_to)
    counted = Metrics(log)
    told = Told(counted)  # commits and fold lag counted as they happen; outside writes pushed
    hub = Hub(data, observer=told)
    ready = threading.Event()
    index = SharedIndex(data, on_indexed=counted.indexed)  # its lag is the events since
    declare(data, config)  # the configuration's remote-backed workspaces, cloned at start
    for name in config.workspaces:  # the configuration's, made before anything is served
        if not data.has(name):
            data.add(name)
    peers = _peers(config, log)  # the other instances on the identity database, if any
    mirrors = Mirrors(data, hub, index.refresh, log, counted, peers=peers)  # remote-backed workspaces
    if config.replication.replicated:  # writes answered once their backend holds them
        hub.replicate = Replicated(mirrors, _turns(config, log))
    told.mirrors = mirrors

    failed = threading.Event()

    def loading() -> None:
        try:
            load(hub, ready, index, mirrors)
        except Exception as exc:  # the service stays up, not ready, and its log says why
            failed.set()
            log.error("load-failed", error=str(exc))

    def start() -> None:
        threading.Thread(target=loading, name="load-workspaces", daemon=True).start()
        mirrors.start(ready)

    limits = config.limits
    limiter = Limiter(limits.rate, limits.burst)
    identity = _identity(data, config, log)
    ops = {
        "config": config,
        "metrics": counted,
        "limiter": limiter,
        "identity": identity,
        "grants": Grants(data.auth_db) if config.identity is None else None,  # kept: SQLite's only
        "log": log,
    }
    hooks = {"mirrors": mirrors, "deliveries": Deliveries()}
    tools = Mcp()  # /mcp: the agents' tools, its server made at the first request
    app = Litestar(
        route_handlers=[
            healthz,
            readyz,
            metrics,
            *ROUTES,
            *WRITES,
            *WHOAMI,
            *STREAMS,
            *SEARCH_ROUTES,
            *GIT,
            *HOOKS,
            *MCP,
            VIEW,
        ],
        state=State(
            {"data": data, "hub": hub, "ready": ready, "failed": failed, "search": index, **ops, **hooks}
            | {"mcp": tools}
        ),
        on_startup=[start],
        lifespan=[tools.lifespan],
        on_shutdown=[mirrors.stop, hub.close, index.close, identity.close],
        exception_handlers={Exception: problem_response},
        request_max_body_size=limits.body_bytes,
        openapi_config=openapi.config(),
        template_config=templating.config(),  # the web view's pages (service/server/web)
        debug=False,
    )
    # around the router, so that every request is seen, an unknown path's too
    app.asgi_handler = Observe(app.asgi_handler, counted, log, limits.request_s)
    return app


def from_environment() -> Litestar:
    """The app of the data directory `SELF_DATA` names, under the configuration file
    `SELF_SERVE_CONFIG` names (if any) and with the identity database `SELF_IDENTITY` names (if
    any): for an ASGI server started by import string
    (`granian --factory service.server.bootstrap:from_environment`)."""
    import os

    from service.app.team import of_this_format
    from service.server.api.config import load, with_options

    config = os.environ.get("SELF_SERVE_CONFIG")
    root = of_this_format(Path(os.environ["SELF_DATA"]))  # a newer or an older format refused
    settings = with_options(load(Path(config) if config else None), identity=os.environ.get("SELF_IDENTITY"))
    return build(root, settings)
