"""dulwich clients that count the bytes they move and bound their waits.

Every transport reports to one `Meter`, (bytes, "read" | "write"), counted where the bytes
cross: the socket of git://, the pipes of ssh, the HTTP bodies, the objects a local
repository hands over. (dulwich's own activity reports miss the pack a push writes and say
nothing for HTTP or local paths.) git:// gets its own socket with the connection's timeout
instead of the process-wide default; HTTP waits once per request (no silent retries).

A `Deadline` bounds the whole of a sync or clone: a server that answers every read just in
time (a trickle) never trips a per-read timeout, so at the deadline a watchdog cuts every
socket and ssh process the deadline was given, and the read under way fails at once.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any
from urllib.parse import urlparse

from dulwich.client import (
    FetchPackResult,
    GitClient,
    LocalGitClient,
    SSHGitClient,
    SSHVendor,
    TCPGitClient,
    Urllib3HttpGitClient,
    _fileno_can_read,
    get_transport_and_path,
)
from dulwich.protocol import DEFAULT_GIT_PROTOCOL_VERSION_FETCH, DEFAULT_GIT_PROTOCOL_VERSION_SEND, Protocol

Meter = Callable[[int, str], None]


class Deadline:
    """The moment a sync or clone must be over. Started on creation; at the moment, every
    connection `watch`ed is cut (and `passed` turns true); `cancel` when the work is done."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._at = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._cuts: list[Callable[[], object]] = []
        self.passed = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def left(self) -> float:
        return max(0.0, self._at - time.monotonic())

    def over(self) -> bool:
        """The moment has come (the watchdog may still be cutting)."""
        return self.passed or self.left() <= 0

    def watch(self, cut: Callable[[], object]) -> None:
        """Call `cut` at the deadline (at once if it has passed)."""
        with self._lock:
            if not self.passed:
                self._cuts.append(cut)
                return
        _quietly(cut)

    def watch_socket(self, sock: socket.socket) -> None:
        self.watch(lambda: sock.shutdown(socket.SHUT_RDWR))  # wakes a recv blocked on it

    def wait(self, timeout: float) -> float:
        """The wait to allow now: `timeout`, less if the deadline is nearer; TimeoutError once
        it has passed."""
        if self.over():
            raise TimeoutError("the deadline passed")
        return min(timeout, self.left())

    def _expire(self) -> None:
        with self._lock:
            self.passed = True
            cuts, self._cuts = self._cuts, []
        for cut in cuts:
            _quietly(cut)

    def cancel(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._cuts = []


def _quietly(cut: Callable[[], object]) -> None:
    with contextlib.suppress(Exception):  # already closed, or the process already gone
        cut()


def client_for(
    url: str, timeout: float, meter: Meter, deadline: Deadline | None = None, **options: Any
) -> tuple[GitClient, str]:
    """The client and the remote path for `url`; `options` go to dulwich (credentials, ssh)."""
    parsed = urlparse(url)
    if parsed.scheme == "git":
        if not parsed.hostname:
            raise ValueError("the URL names no host")
        return TimedTCPClient(parsed.hostname, parsed.port, timeout, meter, deadline), parsed.path
    if parsed.scheme in ("http", "https"):
        if "pool_manager" in options:
            _bound_pools(options["pool_manager"], deadline)
        client = MeteredHTTPClient.from_parsedurl(parsed, report_activity=meter, quiet=True, **options)
        return client, parsed.path
    found, path = get_transport_and_path(url, quiet=True, **options)
    if isinstance(found, SSHGitClient):
        found.ssh_vendor = _MeteredVendor(found.ssh_vendor, meter, deadline)
        return found, path
    if isinstance(found, LocalGitClient):
        return MeteredLocalClient(meter), path
    return found, path


class TimedTCPClient(TCPGitClient):
    """git:// on a socket of its own whose connect and every read wait at most `timeout`."""

    def __init__(
        self, host: str, port: int | None, timeout: float, meter: Meter, deadline: Deadline | None = None
    ) -> None:
        super().__init__(host, port=port, quiet=True)
        self.timeout = timeout
        self._meter = meter
        self._deadline = deadline

    def _connect(
        self, cmd: bytes, path: str | bytes, protocol_version: int | None = None
    ) -> tuple[Protocol, Callable[[], bool], IO[bytes] | None]:
        if not isinstance(path, bytes):
            path = path.encode(self._remote_path_encoding)
        deadline = self._deadline
        wait = deadline.wait(self.timeout) if deadline is not None else self.timeout
        sock = socket.create_connection((self._host, self._port), timeout=wait)
        sock.settimeout(self.timeout)
        if deadline is not None:
            deadline.watch_socket(sock)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        rfile, wfile = sock.makefile("rb", -1), sock.makefile("wb", 0)
        meter = self._meter

        def read(size: int) -> bytes:
            data = rfile.read(size)
            meter(len(data), "read")
            return data

        def write(data: bytes) -> int | None:
            meter(len(data), "write")
            return wfile.write(data)

        def close() -> None:
            rfile.close()
            wfile.close()
            sock.close()

        def shutdown_write() -> None:
            wfile.flush()
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)

        proto = Protocol(read, write, close, shutdown_write=shutdown_write)
        # what dulwich's TCPGitClient._connect sends once connected
        if path.startswith(b"/~"):
            path = path[1:]
        if cmd == b"upload-pack":
            self.protocol_version = (
                DEFAULT_GIT_PROTOCOL_VERSION_FETCH if protocol_version is None else protocol_version
            )
        else:
            self.protocol_version = DEFAULT_GIT_PROTOCOL_VERSION_SEND
        version = b""
        if cmd == b"upload-pack" and self.protocol_version == 2:
            version = b"\0\0version=%d\0" % self.protocol_version
        proto.send_cmd(b"git-" + cmd, path, b"host=" + self._host.encode("ascii") + version)
        return proto, lambda: _fileno_can_read(sock.fileno()), None


class MeteredHTTPClient(Urllib3HttpGitClient):
    """Smart HTTP counting the request and response bodies (its timeout is the pool's)."""

    def _http_request(
        self,
        url: str,
        headers: dict[str, str] | None = None,
        data: bytes | Iterator[bytes] | None = None,
        raise_for_status: bool = True,
    ) -> tuple[Any, Callable[..., bytes]]:
        meter = self._report_activity
        if meter is None:
            return super()._http_request(url, headers, data, raise_for_status)
        if isinstance(data, bytes):
            meter(len(data), "write")
        elif data is not None:
            data = _metered_chunks(data, meter)
        response, read = super()._http_request(url, headers, data, raise_for_status)

        def counted(*args: Any, **kwargs: Any) -> bytes:
            chunk = read(*args, **kwargs)
            meter(len(chunk), "read")
            return chunk

        return response, counted


def _bound_pools(manager: Any, deadline: Deadline | None) -> None:
    """Make `manager`'s HTTP connections wait once per request (urllib3 would silently retry a
    read that timed out, three more times) and put each socket they open under `deadline`."""
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
    from urllib3.util.retry import Retry

    once = Retry(total=None, connect=0, read=0, status=0, other=0, redirect=5)
    manager.connection_pool_kw["retries"] = once
    if deadline is None:
        return

    def watched(base: type[Any]) -> type:
        def connect(self: Any) -> None:
            self.timeout = deadline.wait(self.timeout if isinstance(self.timeout, float | int) else 30.0)
            base.connect(self)
            deadline.watch_socket(self.sock)

        return type(f"Watched{base.__name__}", (base,), {"connect": connect})

    manager.pool_classes_by_scheme = {
        "http": type("WatchedPool", (HTTPConnectionPool,), {"ConnectionCls": watched(HTTPConnection)}),
        "https": type("WatchedTLSPool", (HTTPSConnectionPool,), {"ConnectionCls": watched(HTTPSConnection)}),
    }


def _metered_chunks(chunks: Iterable[bytes], meter: Meter) -> Iterator[bytes]:
    for chunk in chunks:
        meter(len(chunk), "write")
        yield chunk


class MeteredLocalClient(LocalGitClient):
    """A path or file:// remote, run in-process: counts the bytes of the objects it copies."""

    def __init__(self, meter: Meter) -> None:
        super().__init__(quiet=True)
        self._meter = meter

    # The two overrides take what any dulwich since 0.22 passes, so their signatures differ
    # from this dulwich's (whose GitClient and LocalGitClient disagree on `path` themselves).
    def fetch(  # type: ignore[override]
        self,
        path: str | bytes,
        target: Any,
        determine_wants: Any = None,
        progress: Callable[[bytes], None] | None = None,
        depth: int | None = None,
        **ignored: object,
    ) -> FetchPackResult:
        with self._open_repo(path) as source:
            wants = determine_wants or target.object_store.determine_wants_all
            count, records = source.fetch_pack_data(
                wants, target.get_graph_walker(), progress=progress, depth=depth
            )
            target.object_store.add_pack_data(count, _metered_records(records, self._meter, "read"))
            refs = source.get_refs()
        return FetchPackResult(dict(refs), {}, None)

    def send_pack(  # type: ignore[override]
        self, path: str | bytes, update_refs: Any, generate_pack_data: Any, **kwargs: Any
    ) -> Any:
        meter = self._meter

        def generate(*args: Any, **options: Any) -> tuple[int, Iterator[Any]]:
            count, records = generate_pack_data(*args, **options)
            return count, _metered_records(records, meter, "write")

        return super().send_pack(path, update_refs, generate, **kwargs)


def _metered_records(records: Iterable[Any], meter: Meter, direction: str) -> Iterator[Any]:
    for record in records:
        meter(sum(len(chunk) for chunk in (record.comp_chunks or record.decomp_chunks or ())), direction)
        yield record


class _MeteredVendor(SSHVendor):
    """Wraps dulwich's ssh vendor so the pipes to the system's ssh are counted."""

    def __init__(self, vendor: Any, meter: Meter, deadline: Deadline | None = None) -> None:
        self._vendor = vendor
        self._meter = meter
        self._deadline = deadline

    def run_command(self, *args: Any, **kwargs: Any) -> Any:
        pipe = self._vendor.run_command(*args, **kwargs)
        proc = getattr(pipe, "proc", None)
        if self._deadline is not None and proc is not None:
            self._deadline.watch(proc.kill)
        return _MeteredPipe(pipe, self._meter)


class _MeteredPipe:
    def __init__(self, pipe: Any, meter: Meter) -> None:
        self._pipe = pipe
        self._meter = meter

    def read(self, size: int = -1) -> bytes:
        data: bytes = self._pipe.read(size)
        self._meter(len(data), "read")
        return data

    def write(self, data: bytes) -> Any:
        self._meter(len(data), "write")
        return self._pipe.write(data)

    def __getattr__(self, name: str) -> Any:  # close, can_read, stderr, proc
        return getattr(self._pipe, name)
