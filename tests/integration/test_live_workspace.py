"""A live workspace on a real store: answers kept per state version are bounded, and a state
move drops them."""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from pathlib import Path

import pytest

from service.adapters.data.workspaces import Data
from service.core.events.events import Origin
from service.server.api.routes import KEPT_ANSWERS, remembered
from service.server.live.hub import Hub
from service.server.live.jobs import Job
from service.server.live.space import LiveWorkspace
from service.server.live.view import View, reading
from tests.support.live import live_workspace

ANN = Origin("human", True, None, "ann")


NOTE = b'{"events":[{"type":"entity.confirmed","project":"app","payload":{"text":"a note"}}]}'


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveWorkspace]:
    """Workspace `acme` of a new DATA, held by a hub that is closed afterwards."""
    with live_workspace(tmp_path) as found:
        yield found


async def post_note(live: LiveWorkspace, client: Hashable = None, timeout: float = 10.0) -> Job:
    """One note posted to project `app` through the writer, as `client`."""
    from service.app import post
    from service.core.events import posted

    return await live.writer.submit_async(
        lambda batch: post(View(live, None, ANN, batch), posted.decode(NOTE)), timeout, client=client
    )


async def add_project(live: LiveWorkspace) -> None:
    """Project `app`, made through the writer, as the posts below need it."""
    from service.core.commands.commands import project_add

    made = await live.writer.submit_async(
        lambda batch: View(live, None, ANN, batch).write("", lambda s, c, k: project_add(s, k, "app", None)),
        5.0,
    )
    assert made.error is None


def test_kept_answers_are_bounded_and_dropped_when_the_state_moves(tmp_path: Path) -> None:
    data = Data(tmp_path / "data")
    data.add("acme").close()
    hub = Hub(data)
    try:
        live = hub.workspace("acme")
        with reading(live, None, ANN) as view:
            for budget in range(3 * KEPT_ANSWERS):
                assert (
                    remembered(view, ("context", budget), lambda b=budget: str(b).encode())
                    == str(budget).encode()
                )
            assert len(live.rendered) == KEPT_ANSWERS, "never more than the cap"
            assert ("context", 3 * KEPT_ANSWERS - 1) in live.rendered, "the newest are kept"
        live.load()
        assert live.rendered == {}
    finally:
        hub.close()


def test_the_writer_leaves_the_clock_at_the_last_id_it_committed(live: LiveWorkspace) -> None:
    """A batch issues its ids in memory; its commit moves `.local/clock` past them (written
    in place, not through a new file), so a CLI writing next issues later ids."""
    import asyncio

    async def write() -> list[str]:
        await add_project(live)
        ids: list[str] = []
        for _ in range(3):
            job = await post_note(live, timeout=5.0)
            ids += [e.id for e in job.events]
        return ids

    ids = asyncio.run(write())
    clock = live.store.root / ".local" / "clock"
    assert len(ids) == 3 and clock.read_bytes() == max(ids).encode() + b"\n"


def test_readers_asking_for_an_answer_being_rendered_wait_for_that_one_rendering(tmp_path: Path) -> None:
    """Sixteen readers of one state ask for the same answer at once: it is rendered once, and
    every one of them gets it."""
    import threading
    import time

    data = Data(tmp_path / "data")
    data.add("acme").close()
    hub = Hub(data)
    made: list[int] = []
    answers: list[bytes] = []
    start = threading.Barrier(16)

    def render() -> bytes:
        made.append(1)
        time.sleep(0.05)  # long enough for every reader to arrive while it runs
        return b"the answer"

    def reader() -> None:
        with reading(live, None, ANN) as view:
            start.wait()
            answers.append(remembered(view, ("context", "app"), render))

    try:
        live = hub.workspace("acme")
        threads = [threading.Thread(target=reader) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert answers == [b"the answer"] * 16
        assert len(made) == 1
    finally:
        hub.close()


def test_a_read_while_the_writer_moves_main_does_not_wait_for_its_commit(tmp_path: Path) -> None:
    """Between a commit moving main on disk and the states taking its head, main differs from
    the head the states fold; a read then must not wait for the store lock the writer holds
    (nor take the commit for a write from outside)."""
    import asyncio
    import threading

    from service.app.workspace import Workspace
    from service.core.commands.commands import project_add

    data = Data(tmp_path / "data")
    data.add("acme").close()
    hub = Hub(data)
    moved, release = threading.Event(), threading.Event()
    try:
        live = hub.workspace("acme")

        def commit_then_hold(held: LiveWorkspace) -> None:
            # main moves on disk as a batch's commit moves it, before the states know
            Workspace(held.store, None, ANN).write("", lambda s, c, k: project_add(s, k, "app", None))
            moved.set()
            release.wait(10)

        async def run() -> None:
            job = await live.writer.submit_alone_async(commit_then_hold, 20.0)
            assert job.error is None

        writing = threading.Thread(target=asyncio.run, args=(run(),))
        writing.start()
        assert moved.wait(10)
        read: list[bool] = []

        def read_projects() -> None:
            with reading(live, None, ANN) as view:
                read.append("app" in view.projects_known())

        reader = threading.Thread(target=read_projects)
        reader.start()
        reader.join(2)
        answered = not reader.is_alive()
        release.set()
        writing.join(10)
        reader.join(10)
        assert answered, "the read waited for the writer's store lock"
        assert read == [False], "the read saw the states as they were"
    finally:
        release.set()
        hub.close()


def test_the_git_index_follows_the_commits_once_the_writer_is_idle(live: LiveWorkspace) -> None:
    """`.git/index` is not written after each commit of a run of writes, but once no job came
    for INDEX_AFTER_S, and then git sees a clean worktree."""
    import asyncio
    import os
    import subprocess
    import time

    from service.server.live import writer

    root = live.store.root

    def status() -> str:
        argv = ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"]
        quiet = os.environ | {"GIT_OPTIONAL_LOCKS": "0"}  # git status does not write the index
        return subprocess.run(argv, capture_output=True, text=True, check=True, env=quiet).stdout

    async def write() -> float:
        await add_project(live)
        job = await post_note(live, timeout=5.0)
        assert job.error is None
        return time.monotonic()

    index = root / ".git" / "index"
    before = index.stat().st_mtime_ns
    written = asyncio.run(write())
    assert index.stat().st_mtime_ns == before, "not right after the commit"
    assert "projects/app/log/000000.jsonl" in status()
    while index.stat().st_mtime_ns == before and time.monotonic() < written + 10:
        time.sleep(0.02)
    assert time.monotonic() - written >= writer.INDEX_AFTER_S * 0.9
    assert status() == ""


def test_clients_posting_in_a_loop_share_their_commits(
    live: LiveWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sixteen clients that each post again as soon as their last post is answered end up in
    the same commits: the writer waits for those of the last commit (`Returning`), so they do
    not split into two groups whose commits alternate."""
    import asyncio

    from service.server.live import writer

    monkeypatch.setattr(writer, "GATHER_S", 0.2)  # wide, for a loaded machine: the loop comes back at once
    monkeypatch.setattr(writer, "IDLE_S", 0.1)

    async def client(n: int, rounds: int) -> list[str]:
        commits = []
        for _ in range(rounds):
            job = await post_note(live, client=n)
            assert job.error is None and job.commit is not None
            commits.append(job.commit)
            await asyncio.sleep(0.001 * (n % 4))  # the answer's way back and the next post's
        return commits

    async def run() -> list[list[str]]:
        await add_project(live)
        return list(await asyncio.gather(*(client(n, 12) for n in range(16))))

    commits = asyncio.run(run())
    made = {c for each in commits for c in each}
    assert all(len(set(each)) == 12 for each in commits), "one commit a post of each client"
    assert len(made) <= 12 + 2, f"16 clients × 12 posts in {len(made)} commits: they did not share them"


@pytest.mark.parametrize("clients", [1, 2])
def test_a_lone_client_or_one_expected_but_not_on_its_way_holds_no_commit_for_long(
    live: LiveWorkspace, monkeypatch: pytest.MonkeyPatch, clients: int
) -> None:
    """One connection posting in a loop is its commit's only client: nothing is waited for.
    One driver posting through two connections in turn: each connection comes back within
    LOOP_S of its answer, so it is expected at the other's commit, but it cannot come before
    that commit is answered; the writer stops waiting once no job came for IDLE_S, not at
    GATHER_S."""
    import asyncio
    import time

    from service.server.live import writer

    monkeypatch.setattr(writer, "GATHER_S", 2.0)

    async def run() -> float:
        await add_project(live)
        start = time.monotonic()
        for n in range(20):
            job = await post_note(live, client=n % clients)
            assert job.error is None
        return time.monotonic() - start

    took = asyncio.run(run())
    assert took < writer.GATHER_S, f"20 posts took {took:.2f} s: the writer waited for a client not coming"
