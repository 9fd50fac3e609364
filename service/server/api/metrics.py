"""Prometheus metrics of one service, in a registry of its own (never prometheus-client's
process-global one, so two apps in one process count apart), served at `GET /metrics`.

`/metrics` holds counts and timings, labelled by route template, method, status and
workspace name, never a path, a query, a body or a user. It needs no token unless the
configuration's `[metrics] token_env` names a variable, whose value is then the bearer token
it asks for; with `[metrics] port` it is served on that port of the same host alone
(`service/server/run.py`) and this route answers 404. Else keep the port private (the service
binds 127.0.0.1 unless told otherwise) or block /metrics at the proxy.

`Metrics` is at `app.state["metrics"]`; the parts that commit, fold, index and stream call
its methods.
"""

from __future__ import annotations

import hmac
import threading
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, TypeVar

from litestar import Response, get
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)

from service.server.api.config import metrics_token
from service.server.api.errors import ApiError, Unauthenticated

if TYPE_CHECKING:
    from litestar.connection import Request
    from litestar.datastructures import State

    from service.server.api.config import ServiceConfig

T = TypeVar("T")
NAMESPACE = "selfhub"
SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
EVENTS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "(unmatched)"  # the route label of a path no route has: never the path itself


class Metrics:
    """The service's instruments. Thread-safe (prometheus-client's are)."""

    def __init__(self, log: Any | None = None) -> None:
        self.log = log  # where a refused outside write is told
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        ns, reg = NAMESPACE, self.registry
        self._children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}
        self._unindexed: dict[str, int] = {}  # events committed since a workspace was indexed
        self._lock = threading.Lock()
        self.requests = Counter(
            "requests", "HTTP requests answered, by route template, method and status.",
            ["route", "method", "status"], namespace=ns, registry=reg,
        )  # fmt: skip
        self.latency = Histogram(
            "request_seconds", "Time from a request's arrival to its answer's last byte, by route.",
            ["route"], namespace=ns, registry=reg, buckets=SECONDS,
        )  # fmt: skip
        self.batches = Histogram(
            "commit_batch_events", "Events written by one group commit, by workspace.",
            ["workspace"], namespace=ns, registry=reg, buckets=EVENTS,
        )  # fmt: skip
        self.fold = Gauge(
            "fold_lag_events", "Events committed to a workspace and not yet folded.",
            ["workspace"], namespace=ns, registry=reg,
        )  # fmt: skip
        self.index = Gauge(
            "index_lag_events", "Events committed and not yet in the search index.",
            namespace=ns, registry=reg,
        )  # fmt: skip
        self.streams = Gauge(
            "stream_clients", "Clients holding an event stream open.", namespace=ns, registry=reg
        )
        self.deliveries = Counter(
            "webhook_deliveries", "Webhook deliveries (POST /hooks/WS), by outcome.",
            ["outcome"], namespace=ns, registry=reg,
        )  # fmt: skip
        self.syncs = Counter(
            "backend_syncs", "Syncs of a remote-backed workspace with its backend, by trigger and outcome.",
            ["workspace", "trigger", "outcome"], namespace=ns, registry=reg,
        )  # fmt: skip
        self.sync_seconds = Histogram(
            "backend_sync_seconds", "Time one sync with the backend took (fetch, intake, fold, push).",
            ["workspace"], namespace=ns, registry=reg, buckets=SECONDS,
        )  # fmt: skip
        self.pushes = Counter(
            "git_pushes", "Ref updates pushed to the git endpoint (/git/WS.git), by outcome.",
            ["workspace", "outcome"], namespace=ns, registry=reg,
        )  # fmt: skip
        self.outside = Counter(
            "outside_writes", "Writes into a hosted store from outside the service, by outcome.",
            ["workspace", "outcome"], namespace=ns, registry=reg,
        )  # fmt: skip
        self.backend_up = Gauge(
            "backend_up", "1 when the last sync with the workspace's backend succeeded, else 0.",
            ["workspace"], namespace=ns, registry=reg,
        )  # fmt: skip

    def pushed(self, workspace: str, outcome: str) -> None:
        """A ref update pushed to the git endpoint: accepted, or the code that refused it."""
        self.pushes.labels(workspace, outcome).inc()

    def request(self, route: str | None, method: str, status: int, seconds: float) -> None:
        key = (route or UNMATCHED, method if method in METHODS else "OTHER", status)
        found = self._children.get(key)
        if found is None:  # a child per label set, looked up once (labels() costs microseconds)
            found = self._children[key] = (
                self.requests.labels(key[0], key[1], str(status)),
                self.latency.labels(key[0]),
            )
        found[0].inc()
        found[1].observe(seconds)

    def batch_committed(self, workspace: str, events: int) -> None:
        self.batches.labels(workspace).observe(events)
        with self._lock:
            self._unindexed[workspace] = self._unindexed.get(workspace, 0) + events
            self.index.set(sum(self._unindexed.values()))

    def indexed(self, workspace: str) -> None:
        """The search index is up to `workspace`'s head: none of its events wait for it."""
        with self._lock:
            self._unindexed.pop(workspace, None)
            self.index.set(sum(self._unindexed.values()))

    def fold_lag(self, workspace: str, events: int) -> None:
        self.fold.labels(workspace).set(events)

    def outside_write(self, workspace: str, events: int, refused: str | None, commit: str) -> None:
        """A write into a store from outside the service, folded or refused
        (`service/server/live/outside.py`)."""
        self.outside.labels(workspace, refused or "accepted").inc()
        if refused is not None and self.log is not None:
            self.log.warning("outside-write-refused", workspace=workspace, code=refused, commit=commit)

    def delivery(self, outcome: str) -> None:
        """A webhook delivery answered: accepted, coalesced, ignored, refused, replayed,
        too-large, bad-body (no workspace label: a refused one may name anything)."""
        self.deliveries.labels(outcome).inc()

    def backend_synced(self, workspace: str, trigger: str, ok: bool, seconds: float) -> None:
        self.syncs.labels(workspace, trigger, "ok" if ok else "failed").inc()
        self.sync_seconds.labels(workspace).observe(seconds)
        self.backend_up.labels(workspace).set(1 if ok else 0)

    def stream_opened(self) -> None:
        self.streams.inc()

    def stream_closed(self) -> None:
        self.streams.dec()

    async def streaming(self, messages: AsyncIterator[T]) -> AsyncIterator[T]:
        """`messages`, counted in `stream_clients` from its first step to its end."""
        self.stream_opened()
        try:
            async for message in messages:
                yield message
        finally:
            self.stream_closed()

    def exposition(self) -> bytes:
        """The text exposition format Prometheus scrapes."""
        return generate_latest(self.registry)


class Elsewhere(ApiError):
    code = "not-found"

    def __init__(self) -> None:
        super().__init__("/metrics is served on the port the configuration's [metrics] port names")


class NoMetricsToken(Unauthenticated):
    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": 'Bearer realm="metrics"'}


def check_scrape(config: ServiceConfig, authorization: str | None) -> None:
    """Whether a scrape may read `/metrics` on the service's port: Elsewhere when it has its
    own port, NoMetricsToken without the configured token."""
    if config.metrics.port:
        raise Elsewhere()
    expected = metrics_token(config)
    if expected is None:
        return
    scheme, _, given = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), expected.encode()):
        raise NoMetricsToken()


@get("/metrics", sync_to_thread=False, include_in_schema=False)
def metrics(request: Request[Any, Any, Any], state: State) -> Response[bytes]:
    check_scrape(state["config"], request.headers.get("authorization"))
    held: Metrics = state["metrics"]
    return Response(held.exposition(), media_type=CONTENT_TYPE_LATEST)
