"""Real git remotes for the sync tests: bare repositories, `git daemon`, smart HTTP.

The `git` binary is used here, by the tests, to stand up servers and to look at results;
selfhub itself never runs it. Servers listen on 127.0.0.1 on free ports and are stopped by
the pid they were started with; the port helpers and `git daemon` live in tests/support/servers.py,
which bench/sync.py uses too.
"""

from __future__ import annotations

import base64
import contextlib
import http.server
import os
import subprocess
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import msgspec

from service.adapters.store import Store
from service.adapters.store.clock import OFFSET_ENV
from service.adapters.sync import Options, Summary, clone, remotes, sync
from service.adapters.sync.remembered import last_synced
from service.core.events.events import Assertion, Event, Origin, ProjectAdded, make
from tests.support.servers import GIT
from tests.support.servers import free_port as free_port  # the servers, re-exported for the sync tests
from tests.support.servers import git_daemon as git_daemon
from tests.support.servers import wait_port as wait_port

FAST = Options(tries=8, timeout=5, pause=0.01, max_pause=0.05)
ORIGIN = Origin("agent", True)
TS = "2026-11-30T09:57:45.069Z"


def git(*args: str, cwd: Path | None = None, check: bool = True) -> str:
    assert GIT is not None, "the tests need the git binary"
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd or Path.cwd())}
    env.setdefault("GIT_AUTHOR_NAME", "t")
    env.setdefault("GIT_AUTHOR_EMAIL", "t@localhost")
    env.setdefault("GIT_COMMITTER_NAME", "t")
    env.setdefault("GIT_COMMITTER_EMAIL", "t@localhost")
    proc = subprocess.run([GIT, *args], cwd=cwd, capture_output=True, text=True, env=env, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def bare(path: Path) -> Path:
    git("init", "--bare", "-q", str(path))
    return path


# --- smart HTTP: git http-backend behind a small CGI server with basic auth ------------------------


class _Backend(http.server.BaseHTTPRequestHandler):
    root: Path
    user: str
    token: str

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _authorized(self) -> bool:
        header = self.headers.get("Authorization", "")
        expected = base64.b64encode(f"{self.user}:{self.token}".encode()).decode()
        return header == f"Basic {expected}"

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        body = self._body()
        if not self._authorized():
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ.get("PATH", ""),
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REMOTE_USER": self.user,
            "REMOTE_ADDR": "127.0.0.1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
        }
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        assert GIT is not None
        proc = subprocess.run([GIT, "http-backend"], input=body, env=env, capture_output=True, check=False)
        head, _, payload = proc.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = proc.stdout.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.strip().split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@contextlib.contextmanager
def http_git(root: Path, user: str, token: str) -> Iterator[int]:
    """Smart HTTP for every repository under `root`, basic auth `user:token`; yields the port."""
    handler = type("Backend", (_Backend,), {"root": root, "user": user, "token": token})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# --- stores -----------------------------------------------------------------------------------------


OPEN: list[Store] = []


def track(store: Store) -> Store:
    """Remember a store so the test's teardown closes it (its git packs stay open till then)."""
    OPEN.append(store)
    return store


def close_all() -> None:
    while OPEN:
        OPEN.pop().close()


def new_store(path: Path, project: str = "app") -> Store:
    store = track(Store.init(path))
    with store.transaction("") as tx:
        tx.append([make(tx.new_id(), TS, "project.added", ORIGIN, "", ProjectAdded(project, "sync tests"))])
    return store


def append(store: Store, n: int = 1, log: str = "app", text: str = "record") -> list[Event]:
    with store.transaction(log) as tx:
        events = [
            make(i, TS, "entity.proposed", ORIGIN, log, Assertion(entity=i, text=f"{text} {k}"))
            for k, i in enumerate(tx.next_ids(n))
        ]
        tx.append(events)
    return events


def replica(tmp_path: Path, name: str, url: str, seed: Store | None = None) -> Store:
    """A store joined to the remote: the first one publishes, the others clone."""
    if seed is None:
        store = new_store(tmp_path / name)
        remotes.add(store.repo, url)
        sync(store, options=FAST)
        return store
    store, _ = clone(url, tmp_path / name, FAST)
    return track(store)


def pair(tmp_path: Path) -> tuple[Path, Store, Store]:
    """A bare remote by path, replica a published to it and replica b cloned from it."""
    path = bare(tmp_path / "remote.git")
    a = replica(tmp_path, "a", str(path))
    return path, a, replica(tmp_path, "b", str(path), seed=a)


def files(store: Store) -> dict[str, bytes]:
    """Every file git tracks or could (all but .git/ and .local/)."""
    return {
        str(p.relative_to(store.root)): p.read_bytes()
        for p in sorted(store.root.rglob("*"))
        if p.is_file() and p.relative_to(store.root).parts[0] not in (".git", ".local")
    }


def folded(store: Store) -> dict[str, bytes]:
    """Each log's state through the store's caches, encoded, beside a refold from nothing."""
    out = {}
    for log in store.logs():
        cached, _ = store.state(log)
        fresh, _ = store.refold(log)
        encoded = msgspec.json.encode(cached, order="sorted")
        assert encoded == msgspec.json.encode(fresh, order="sorted"), f"cache differs from a refold: {log}"
        out[log] = encoded
    return out


def same(*stores: Store) -> None:
    first = stores[0]
    for other in stores[1:]:
        assert files(other) == files(first), "the replicas' files differ"
        assert folded(other) == folded(first), "the replicas' folded states differ"


def event_ids(store: Store) -> list[str]:
    """Every event id of every log, with repeats (a duplicate shows twice)."""
    return [e.id for log in store.logs() for e in store.read(log).events]


def remote_ids(repo_path: Path) -> list[str]:
    """Every event id on the remote's main, read with git (not with selfhub)."""
    listing = git("ls-tree", "-r", "--name-only", "main", cwd=repo_path)
    found = []
    for path in listing.split():
        if path.endswith(".jsonl"):
            for line in git("show", f"main:{path}", cwd=repo_path).splitlines():
                if line.strip():
                    found.append(msgspec.json.decode(line)["id"])
    return found


def event_lines(store: Store) -> list[bytes]:
    """Every line of every log segment in the working files, with repeats."""
    paths = [
        p
        for pattern in ("workspace/log/*.jsonl", "projects/*/log/*.jsonl")
        for p in sorted(store.root.glob(pattern))
    ]
    return [line for path in paths for line in path.read_bytes().splitlines(keepends=True)]


def remote_lines(repo_path: Path) -> list[bytes]:
    """Every log line on the remote's main, read with git (not with selfhub)."""
    listing = git("ls-tree", "-r", "--name-only", "main", cwd=repo_path)
    found = []
    for path in listing.split():
        if path.endswith(".jsonl"):
            data = subprocess.run(
                [str(GIT), "show", f"main:{path}"], cwd=repo_path, capture_output=True, check=True
            ).stdout
            found += data.splitlines(keepends=True)
    return found


@contextlib.contextmanager
def clock_offset(ms: int | str) -> Iterator[None]:
    """Run the block with the store's wall clock `ms` milliseconds off (SELF_CLOCK_OFFSET_MS)."""
    before = os.environ.get(OFFSET_ENV)
    os.environ[OFFSET_ENV] = str(ms)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(OFFSET_ENV, None)
        else:
            os.environ[OFFSET_ENV] = before


def status_clean(store: Store) -> bool:
    return git("status", "--porcelain", cwd=store.root).strip() == ""


class World:
    """Remotes X and Y, replica A (published to both) and replica B (cloned from X, joined to Y)."""

    def __init__(self, root: Path) -> None:
        self.x = bare(root / "x.git")
        self.y = bare(root / "y.git")
        self.a = self.join(new_store(root / "a"), "x", "y")
        self.b = self.join(track(clone(str(self.x), root / "b", FAST)[0]), "x", "y")

    def join(self, store: Store, *names: str) -> Store:
        """Add remotes X and Y to `store`, then sync it with each of `names` in turn."""
        remotes.add(store.repo, str(self.x), "x")
        remotes.add(store.repo, str(self.y), "y")
        for name in names:
            self.sync(store, name)
        return store

    def path(self, name: str) -> Path:
        return self.x if name == "x" else self.y

    def sync(self, store: Store, name: str) -> Summary:
        """Sync, checking that the remote's main only moved forward and nothing was rejected."""
        path = self.path(name)
        before = git("rev-parse", "--verify", "-q", "main", cwd=path, check=False).strip()
        summary = sync(store, name, FAST)
        after = git("rev-parse", "main", cwd=path).strip()
        assert summary.retries == 0, "a push was rejected"
        if before:
            git("merge-base", "--is-ancestor", before, after, cwd=path)  # fails unless a fast-forward
        assert after == summary.head == store.head()
        return summary

    def diverge(self, a: int = 2, b: int = 2) -> None:
        """A publishes `a` events to X, then B `b` events to Y: the remotes' histories part."""
        append(self.a, a, text="a")
        self.sync(self.a, "x")
        append(self.b, b, text="b")
        self.sync(self.b, "y")

    def catch_up(self) -> None:
        """A syncs with X, B with X and then Y; after that everything must be settled."""
        self.sync(self.a, "x")
        self.sync(self.b, "x")
        self.sync(self.b, "y")
        self.settled()

    def settled(self) -> None:
        """Every replica and remote on one commit, byte-identical, every event once."""
        head = git("rev-parse", "main", cwd=self.x).strip()
        assert git("rev-parse", "main", cwd=self.y).strip() == head
        assert self.a.head() == self.b.head() == head
        same(self.a, self.b)
        ids = Counter(remote_ids(self.x))
        assert set(ids.values()) == {1}, "an event is on a remote twice"
        assert Counter(remote_ids(self.y)) == ids
        for store in (self.a, self.b):
            assert Counter(event_ids(store)) == ids
            assert status_clean(store)
            assert last_synced(store, "x") == last_synced(store, "y") == head
