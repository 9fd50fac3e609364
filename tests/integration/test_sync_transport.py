"""Every transport counts the bytes it moves (what progress and `bytes_*` report): a bare
repository by path and file://, `git daemon`, smart HTTP."""

from __future__ import annotations

import random
import string
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.adapters.store import Store
from service.adapters.sync import Options, clone, remotes, sync
from service.core.events.events import Assertion, make
from tests.support.sync_support import ORIGIN, TS, append, bare, git_daemon, http_git, new_store, track

USER, TOKEN = "alice", "tok-5e1d9a7c3b"
NOISE = 40_000  # bytes of incompressible text in the published events


@pytest.fixture(params=["path", "file", "daemon", "http"])
def url(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    served = tmp_path / "served"
    served.mkdir()
    path = bare(served / "ws.git")
    if request.param == "path":
        yield str(path)
    elif request.param == "file":
        yield f"file://{path}"
    elif request.param == "daemon":
        with git_daemon(served) as port:
            yield f"git://127.0.0.1:{port}/ws.git"
    else:
        monkeypatch.setenv("SELF_TOKEN", TOKEN)
        monkeypatch.setenv("SELF_GIT_USERNAME", USER)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
        with http_git(served, USER, TOKEN) as port:
            yield f"http://127.0.0.1:{port}/ws.git"


class Seen:
    """The activity reports of one sync or clone: (received, sent) so far, in order."""

    def __init__(self) -> None:
        self.reports: list[tuple[int, int]] = []

    def __call__(self, received: int, sent: int) -> None:
        self.reports.append((received, sent))

    def options(self) -> Options:
        return Options(timeout=10, pause=0.01, max_pause=0.05, activity=self)


def noisy(store: Store, n: int) -> None:
    """`n` events whose text, made of random short words, adds up to NOISE bytes."""
    rng = random.Random(n)
    words = " ".join(
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 8))) for _ in range(NOISE // 6)
    )
    size = len(words) // n
    with store.transaction("app") as tx:
        tx.append(
            [
                make(
                    i,
                    TS,
                    "entity.proposed",
                    ORIGIN,
                    "app",
                    Assertion(entity=i, text=words[k * size : (k + 1) * size]),
                )
                for k, i in enumerate(tx.next_ids(n))
            ]
        )


def test_every_transport_counts_both_directions(tmp_path: Path, url: str) -> None:
    a = new_store(tmp_path / "a")
    noisy(a, 100)
    remotes.add(a.repo, url)
    seen = Seen()
    published = sync(a, options=seen.options())
    assert published.created
    assert published.bytes_sent >= NOISE // 2, published  # at least the pack, compressed or not
    assert seen.reports[-1] == (published.bytes_received, published.bytes_sent)
    assert seen.reports == sorted(seen.reports)  # counters only grow

    seen = Seen()
    b, cloned = clone(url, tmp_path / "b", seen.options())
    track(b)
    assert cloned.bytes_received >= NOISE // 2, cloned
    assert seen.reports[-1][0] == cloned.bytes_received

    append(a, 1)
    pushed = sync(a, options=Seen().options())
    assert pushed.pushed == 1 and 0 < pushed.bytes_sent < published.bytes_sent  # one segment
    pulled = sync(b, options=Seen().options())
    assert pulled.pulled == 1 and 0 < pulled.bytes_received < cloned.bytes_received


def test_a_push_counts_its_pack(tmp_path: Path) -> None:
    """The pack a push writes is counted, not only the protocol lines around it."""
    served = tmp_path / "served"
    served.mkdir()
    bare(served / "ws.git")
    with git_daemon(served) as port:
        a = new_store(tmp_path / "a")
        remotes.add(a.repo, f"git://127.0.0.1:{port}/ws.git")
        sync(a, options=Seen().options())
        noisy(a, 50)
        started = time.monotonic()
        summary = sync(a, options=Seen().options())
    assert summary.pushed == 50 and summary.bytes_sent >= NOISE // 2
    assert time.monotonic() - started < 10


def test_progress_messages_become_counted_steps_and_nothing_else(tmp_path: Path) -> None:
    """What the server and dulwich report becomes (step, done, total); text that is not a
    count (including a server's attempt to send terminal escapes) is dropped."""
    from service.adapters.sync.transport import Connection

    steps: list[tuple[str, int, int]] = []
    conn = Connection(str(bare(tmp_path / "r.git")), 5, None, None, lambda *step: steps.append(step))
    conn._progress(b"Counting objects:  45% (52/116)\rCompressing obj")
    conn._progress(b"ects: 100% (3/3), done.\n")  # a line split across two sideband packets
    conn._progress(b"generating index: 7/9\r")
    conn._progress(b"\x1b]0;title\x07Counting objects: 1/2\r")
    conn._progress(b"Total 116 (delta 98), reused 0 (delta 0)\n")
    conn._progress(b"Receiving objects:   116 (delta 0), 0.03 MiB | 0.01 MiB/s\r")
    assert steps == [("Counting objects", 52, 116), ("Compressing objects", 3, 3), ("generating index", 7, 9)]


def test_a_sync_with_a_step_hook_gets_the_steps_of_its_fetch(tmp_path: Path) -> None:
    """Over git daemon the server counts and compresses the objects and dulwich copies and
    indexes them: each step arrives with its total, and runs to its end."""
    a, b = new_store(tmp_path / "a"), new_store(tmp_path / "b")
    served = tmp_path / "served"
    served.mkdir()
    bare(served / "ws.git")
    with git_daemon(served) as port:
        for store in (a, b):
            remotes.add(store.repo, f"git://127.0.0.1:{port}/ws.git")
        append(a, 50, text="a")
        sync(a, options=Options(timeout=10))
        steps: list[tuple[str, int, int]] = []
        sync(b, options=Options(timeout=10, stage=lambda *step: steps.append(step)))
    names = {name for name, _, _ in steps}
    assert {"Counting objects", "generating index"} <= names, names
    assert all(0 <= done <= total for _, done, total in steps)
    for name in names:  # each step runs to its end (dulwich counts its own from 0, the server from 1)
        assert min(total - done for n, done, total in steps if n == name) <= 1, name
