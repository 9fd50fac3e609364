"""Talking to a remote through dulwich: fetch main, push main with compare-and-swap.

No git binary: git:// and http(s) are spoken by dulwich itself, paths and file:// run
in-process, ssh runs the system's ssh (`clients.py`). Every network wait of a connection is
bounded by its `timeout` (the git:// socket's own, the HTTP pool's, ssh's ConnectTimeout and
keepalives), and the whole connection by its `deadline` (`clients.Deadline`); every failure
becomes a SyncError whose text holds no secret. A push the server refuses while its main is
still where we expect is not contention: `Declined`, with what the server said.

Contention on the remote is a rejection like any other, retried by the engine after a jittered
pause: a push whose compare-and-swap fails, a server that declines the update, and — for a
remote on a path or `file://`, which dulwich updates in-process — a ref another push holds
locked (`FileLocked`). A lock there older than `STALE_LOCK` is a killed push's, and the sync
stops naming it: no lock of selfhub's covers the remote, so removing it could race another
push. dulwich's in-process fetch reads the remote's refs a second time after copying the
objects; a push landing in between would name a commit never fetched, so the sync keeps the
head its wants were computed from. `tests/e2e/test_sync_at_once.py` runs three `self sync`
processes at once against one path remote, round after round.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import cast
from urllib.parse import urlparse

from dulwich.client import GitClient, HTTPUnauthorized, LocalGitClient
from dulwich.errors import GitProtocolError, HangupException, NotGitRepository
from dulwich.file import FileLocked
from dulwich.objects import ZERO_SHA, ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

from service.adapters.store.gitcommit import STALE_LOCK
from service.adapters.sync import credentials
from service.adapters.sync.clients import Deadline, client_for
from service.adapters.sync.errors import AuthFailed, Declined, SyncError, Unreachable
from service.core.errors import SelfhubError

MAIN = Ref(b"refs/heads/main")
Activity = Callable[[int, int], None]  # (bytes received, bytes sent) so far
Stage = Callable[[str, int, int], None]  # (what, done, total): a step the server or dulwich counts
# "Counting objects:  45% (52/116)" from the server, "generating index: 52/116" from dulwich.
# Letters and spaces only: a server's text never reaches the terminal as it was sent.
_STAGE = re.compile(rb"([A-Za-z][A-Za-z ]{0,39}):\s*(?:\d+%\s*)?\(?(\d+)/(\d+)\)?")


class Moved(SelfhubError):
    """The remote's main is not where the compare-and-swap expects it (raised inside a push's
    ref update and caught by `Connection.push`, which answers why the push did not land)."""

    def __init__(self, found: ObjectID | None) -> None:
        super().__init__("the remote moved")
        self.found = found


class Connection:
    """One remote URL with its client, its credentials and a timeout."""

    def __init__(
        self,
        url: str,
        timeout: float,
        store_root: Path | None = None,
        activity: Activity | None = None,
        stage: Stage | None = None,
        deadline: float | None = None,
    ) -> None:
        self.url = url
        self.timeout = timeout
        self.deadline = Deadline(deadline) if deadline is not None else None
        self.secrets: list[str] = []  # the tokens this connection sends
        self._in_url = credentials.url_secrets(url)  # what a URL from before may hold
        self.sent = 0
        self.received = 0
        self._activity = activity
        self._stage = stage
        self._partial = b""
        parsed = urlparse(url)
        kwargs: dict[str, object] = {}
        self.scheme = (
            parsed.scheme if "://" in url else ("ssh" if not Path(url).exists() and ":" in url else "")
        )
        if parsed.scheme in ("http", "https"):
            from dulwich.client import default_urllib3_manager

            found = credentials.lookup(url, store_root)
            if found is not None:
                self.secrets.append(found.token)
                kwargs["username"], kwargs["password"] = found.username, found.token
            kwargs["pool_manager"] = default_urllib3_manager(None, base_url=url, timeout=timeout)
        elif self.scheme in ("ssh", "git+ssh"):
            seconds = max(1, int(timeout))
            base = os.environ.get("SELF_SSH_COMMAND") or os.environ.get("GIT_SSH_COMMAND") or "ssh"
            kwargs["ssh_command"] = (
                f"{base} -o BatchMode=yes -o ConnectTimeout={seconds} "
                f"-o ServerAliveInterval={seconds} -o ServerAliveCountMax=1"
            )
        try:
            self._open(kwargs)
        except BaseException:
            self.close()  # the deadline's watchdog too
            raise

    def _open(self, kwargs: dict[str, object]) -> None:
        try:
            self.client, self.path = client_for(self.url, self.timeout, self._report, self.deadline, **kwargs)
        except ValueError as exc:
            raise SyncError(f"{self.shown}: {exc}") from None
        if isinstance(self.client, LocalGitClient):
            self._check_local()

    def close(self) -> None:
        """Release pooled HTTP connections and anything else the client holds."""
        if self.deadline is not None:
            self.deadline.cancel()
        if not hasattr(self, "client"):
            return
        with contextlib.suppress(Exception):
            self.client.close()
        pool = getattr(self.client, "pool_manager", None)
        if pool is not None:
            with contextlib.suppress(Exception):
                pool.clear()

    @property
    def shown(self) -> str:
        return credentials.redact(self.url, self.secrets + self._in_url)

    def _report(self, count: int, direction: str) -> None:
        if direction == "write":
            self.sent += count
        else:
            self.received += count
        if self._activity is not None:
            self._activity(self.received, self.sent)

    def _reporter(self) -> Callable[[bytes], None] | None:
        """What dulwich reports progress to: nothing unless a stage hook listens (without
        one, dulwich asks the server to send no progress at all)."""
        return self._progress if self._stage is not None else None

    def _progress(self, message: bytes) -> None:
        """Report each complete line; a line split across two sideband packets waits for its end."""
        assert self._stage is not None
        *lines, self._partial = re.split(rb"[\r\n]", self._partial + message)
        for line in lines:
            found = _STAGE.match(line.strip())
            if found is not None:
                what, done, total = found.groups()
                self._stage(what.decode("ascii").strip(), int(done), int(total))

    def _check_local(self) -> None:
        path = Path(self.path)
        if not path.exists():
            raise Unreachable(f"no repository at {self.shown}: the path does not exist")
        try:
            Repo(str(path)).close()
        except NotGitRepository:
            raise Unreachable(f"{self.shown} is not a git repository") from None

    # --- operations ------------------------------------------------------------------

    def fetch(self, repo: Repo, progress: Callable[[bytes], None] | None = None) -> ObjectID | None:
        """Bring the remote's main (and what it needs) into `repo`'s objects; its id, or None."""
        seen: dict[str, ObjectID | None] = {}

        def wants(refs: Mapping[Ref, ObjectID], depth: int | None = None) -> list[ObjectID]:
            head = refs.get(MAIN)
            seen["head"] = head
            if head is None or head == ZERO_SHA or head in repo.object_store:
                return []
            return [head]

        with self.guard("fetch from"):
            result = self.client.fetch(
                self.path, repo, determine_wants=wants, progress=progress or self._reporter()
            )
        # The head the wants were computed from, whose objects were fetched: dulwich's
        # in-process fetch (a path or file:// remote) reads the remote's refs a second time
        # after the pack, so another push landing in between would name a commit never fetched.
        head = seen["head"] if "head" in seen else result.refs.get(MAIN) if result.refs is not None else None
        return None if head in (None, ZERO_SHA) else head

    def push(
        self,
        repo: Repo,
        expected: ObjectID | None,
        new: ObjectID,
        pack: Callable[..., tuple[int, Iterator[object]]] | None = None,
        progress: Callable[[bytes], None] | None = None,
    ) -> str | None:
        """Move the remote's main from `expected` (None: absent) to `new`; None when it moved,
        else why not. Never forces: the server applies the update only if main is `expected`."""

        def update_refs(refs: dict[Ref, ObjectID]) -> dict[Ref, ObjectID]:
            current = refs.get(MAIN)
            current = None if current == ZERO_SHA else current
            if current != expected:
                raise Moved(current)
            return {MAIN: new}

        generate = pack or repo.generate_pack_data
        said = _Said(progress or self._reporter())
        try:
            with self.guard("push to"):
                # dulwich gaps: send_pack declares `path: bytes` (its clients take str too), and
                # its own Repo.generate_pack_data does not match its GeneratePackDataFunc.
                result = self.client.send_pack(
                    self.path,  # type: ignore[arg-type]
                    update_refs,
                    generate,  # type: ignore[arg-type]
                    progress=said,
                )
        except Moved:
            return "the remote's main moved since the fetch"
        except FileLocked as exc:
            # A path or file:// remote: another push holds its ref's lock this very moment,
            # unless the lock is older than any push holds one (a push there was killed).
            self._check_stale(Path(os.fsdecode(exc.args[1])))
            return "another push was updating the remote's main"
        status = result.ref_status
        if status is not None and MAIN in status:
            reason = status[MAIN]
            return None if reason is None else self._declined(reason, expected, said.text())
        # No report for our ref (a server without report-status): look, never assume.
        return None if self.head() == new else "the remote did not confirm the update"

    def _check_stale(self, lock: Path) -> None:
        """A remote's ref lock older than STALE_LOCK was left by a killed push. It is not ours
        to remove (no lock of ours covers the remote): say which file, instead of retrying."""
        try:
            age = time.time() - lock.stat().st_mtime
        except FileNotFoundError:
            return
        if age >= STALE_LOCK:
            raise SyncError(
                f"could not push to {self.shown}: its main has been locked for {age:.0f} s by "
                f"{lock}, which a killed push left; remove that file if no push to it is running, "
                "then sync again. The local store is untouched"
            )

    def _declined(self, reason: str, expected: ObjectID | None, said: str) -> str:
        """Why the push was declined, when others pushing first may explain it (try again);
        Declined when the remote's main is still where we expected: the server's own rule."""
        if "lock" in reason.lower() or self.head() != expected:
            return f"the remote declined: {reason}"
        told = f" ({self._printable(said)})" if said else ""
        raise Declined(
            f"{self.shown} refused the push: {self._printable(reason)}{told}. Nothing is lost (the "
            "events stay in the local store)"
        )

    def _printable(self, text: str, most: int = 400) -> str:
        """A server's words as one line of printable characters, cut at `most`, no secret."""
        flat = " ".join("".join(c if c.isprintable() else " " for c in text).split())
        flat = credentials.redact(flat, self.secrets)
        return flat if len(flat) <= most else flat[: most - 1] + "…"

    def head(self) -> ObjectID | None:
        with self.guard("read"):
            # GitClient.get_refs declares `path: bytes`; every client dulwich has takes str too.
            refs = self.client.get_refs(self.path)  # type: ignore[arg-type]
        # An LsRemoteResult (its .refs); older dulwich returned the refs mapping itself.
        table = cast("Mapping[Ref, ObjectID | None]", getattr(refs, "refs", refs))
        found = table.get(MAIN)
        return None if found in (None, ZERO_SHA) else found

    @contextlib.contextmanager
    def guard(self, doing: str) -> Iterator[None]:
        """Bound the waits by the timeout and turn transport failures into clear errors."""
        error: SyncError | None = None
        try:
            if self.deadline is not None and self.deadline.over():
                raise TimeoutError("the deadline passed")
            yield
        except (Moved, FileLocked, Declined):
            raise  # another push came first (the caller retries), or the server's own refusal
        except Exception as exc:
            _close_connections(exc)
            error = self._past_deadline(doing) or self._explain(exc, doing)
            if error is None:
                raise
        if error is not None:
            raise error  # outside the handler: no chained traceback keeps the connection alive

    def _past_deadline(self, doing: str) -> SyncError | None:
        """The error of a call the deadline cut (whatever the cut connection raised)."""
        if self.deadline is None or not self.deadline.over():
            return None
        return Unreachable(
            f"could not {doing} {self.shown}: it did not finish within {self.deadline.seconds:g} s, "
            "the deadline of the whole sync or clone (raise it with {deadline} or "
            "SELF_SYNC_DEADLINE); no local event is lost",
            field="deadline",
        )

    def _explain(self, exc: Exception, doing: str) -> SyncError | None:
        where = self.shown
        timed_out = (
            f"could not {doing} {where}: no answer within {self.timeout:g} s "
            "(raise it with {timeout} or SELF_SYNC_TIMEOUT); the local store is untouched"
        )
        if isinstance(exc, HTTPUnauthorized):
            hint = "the token was refused" if self.secrets else "it asks for credentials and none are set"
            return AuthFailed(
                f"could not {doing} {where}: {hint}; set SELF_TOKEN (and SELF_GIT_USERNAME) "
                "or add the URL to the credentials file"
            )
        if isinstance(exc, TimeoutError):
            return Unreachable(timed_out, field="timeout")
        if isinstance(exc, NotGitRepository):
            return Unreachable(f"could not {doing} {where}: no git repository there")
        text = self._clean(exc)
        if isinstance(exc, HangupException):
            if "Permission denied" in text or "Authentication failed" in text:
                return AuthFailed(f"could not {doing} {where}: {text}")
            return Unreachable(f"could not {doing} {where}: the remote hung up ({text})")
        if "timed out" in text:
            return Unreachable(timed_out, field="timeout")
        reason = _network_reason(text)
        if isinstance(exc, GitProtocolError):
            kind = protocol_failure(text)
            if _FORBIDDEN.search(text):
                return AuthFailed(f"could not {doing} {where}: {forbidden(self.url)}")
            if kind == "auth":
                return AuthFailed(f"could not {doing} {where}: {text}")
            if kind == "missing":
                return Unreachable(f"could not {doing} {where}: no such repository ({text})")
            return SyncError(f"could not {doing} {where}: {reason or text}")
        if isinstance(exc, (ConnectionError, OSError)) or _from_http(exc):
            return Unreachable(
                f"could not {doing} {where}: {reason or text}; check the URL and the network; "
                "the local store is untouched"
            )
        return None

    def _clean(self, exc: BaseException) -> str:
        text = str(exc) or type(exc).__name__
        return credentials.redact(text.strip(), self.secrets + self._in_url)


# The patterns below read failures only: compiled on the first one, not by every sync.
@functools.cache
def _network_reasons() -> tuple[tuple[re.Pattern[str], str], ...]:
    return (
        (re.compile(r"unexpected http resp (\d+)"), r"the server answered HTTP \1"),
        (re.compile(r"Connection refused"), "connection refused"),
        (re.compile(r"Failed to resolve|Name or service not known|nodename nor servname"), "no such host"),
        (
            re.compile(r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"),
            "its TLS certificate is untrusted",
        ),
        (re.compile(r"Connection reset|Connection aborted|RemoteDisconnected"), "the connection was dropped"),
        (re.compile(r"Max retries exceeded|HTTPS?ConnectionPool"), "the connection failed"),
    )


@functools.cache
def _failure_kinds() -> tuple[tuple[re.Pattern[str], str], ...]:
    return (
        (re.compile(r"\b(401|403)\b|Authentication"), "auth"),
        (re.compile(r"\b404\b|not found|not exported", re.IGNORECASE), "missing"),
    )


_FORBIDDEN = re.compile(r"unexpected http resp 403\b")
_SERVICE_PATH = re.compile(r"/git/([^/]+?)(?:\.git)?/?$")


def forbidden(url: str) -> str:
    """What an HTTP 403 from a git server means: on a selfhub service (a URL ending
    /git/WS.git) that the workspace is not there or the token may not read it (the service
    answers both alike, so neither is told apart)."""
    found = _SERVICE_PATH.search(urlparse(url).path)
    if found is not None:
        return (
            f"no workspace {found[1]} on this service, or this token may not read it "
            "(the server answered HTTP 403); check the workspace's name and the token's"
        )
    return "the server answered HTTP 403: no repository there, or these credentials may not read it"


def protocol_failure(text: str) -> str | None:
    """What a git protocol error's text says: "auth" (HTTP 401 or 403, or an authentication
    failure), "missing" (HTTP 404, no such repository), else None. Statuses are whole numbers,
    so a port such as 46403 in the text says nothing."""
    for pattern, kind in _failure_kinds():
        if pattern.search(text):
            return kind
    return None


def _network_reason(text: str) -> str | None:
    """A transport error's text (urllib3's carry pools, URLs and causes) as a short reason:
    the HTTP status, connection refused, no such host…; None when none is recognized."""
    for pattern, reason in _network_reasons():
        match = pattern.search(text)
        if match:
            return match.expand(reason)
    return None


class _Said:
    """What a server says on the progress channel during a push (a hook's reason for refusing
    it goes there), the last few kilobytes, passed on to `then` as it comes."""

    MOST = 4096

    def __init__(self, then: Callable[[bytes], None] | None) -> None:
        self._then = then
        self._heard = b""

    def __call__(self, message: bytes) -> None:
        self._heard = (self._heard + message)[-self.MOST :]
        if self._then is not None:
            self._then(message)

    def text(self) -> str:
        lines = [line.strip() for line in re.split(rb"[\r\n]", self._heard)]
        kept = [line.decode("utf-8", "replace") for line in lines if line and not _STAGE.match(line)]
        return " / ".join(kept)


def is_local(client: GitClient) -> bool:
    """A remote on a path or `file://`, which dulwich reads and writes in-process."""
    return isinstance(client, LocalGitClient)


def _from_http(exc: Exception) -> bool:
    """An error of urllib3 or http.client (never imported here: most syncs use neither)."""
    http = sys.modules.get("http.client")
    return type(exc).__module__.startswith("urllib3") or (
        http is not None and isinstance(exc, http.HTTPException)
    )


def _close_connections(exc: BaseException) -> None:
    """Close the connections (git protocol, HTTP responses) a failed call left open in its
    frames: dulwich leaves them to the garbage collector, which may be much later."""
    from dulwich.protocol import Protocol

    tb = exc.__traceback__
    while tb is not None:
        for value in list(tb.tb_frame.f_locals.values()):
            if isinstance(value, Protocol) or type(value).__module__.startswith("urllib3.response"):
                with contextlib.suppress(Exception):
                    value.close()
        tb = tb.tb_next
