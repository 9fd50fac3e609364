"""Many pushers on one git endpoint at once, the git program and the self CLI side by side
(used by tests/e2e/test_git_push_concurrency.py and bench/service.py).

Each git pusher appends one event to its own project's log in its own clone, commits and
pushes; a rejected push is pulled with a rebase and pushed again. Each self pusher adds a
record in its own clone and runs `self sync` (which retries by itself). An id counts as
acknowledged only once the push or sync that carried it said so; `missing` lists those the
endpoint does not hold afterwards.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import gitclient as gc
from tests.support.selfrun import base_env, run_process
from tests.support.servers import GIT

MAX_TRIES = 500
MAX_SYNCS = 50
PAUSE_S = (0.0, 0.2)  # seconds between two pushes of one git pusher


@dataclass
class Outcome:
    acked: list[str] = field(default_factory=list)
    pushes: int = 0  # pushes (or syncs) that reported success
    rejected: int = 0  # pushes turned away because another came first
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, ids: list[str], rejected: int) -> None:
        with self.lock:
            self.acked += ids
            self.pushes += 1
            self.rejected += rejected


def run(
    url_of: Callable[[str], str],
    work: Path,
    tokens: list[str],
    *,
    git_pushers: int,
    self_pushers: int,
    rounds: int,
    self_rounds: int,
    pause: tuple[float, float] = PAUSE_S,
) -> Outcome:
    """`git_pushers` + `self_pushers` threads, each with its own token of `tokens`, pushing
    to `url_of(token)` (the URL with basic auth `ann:token` in it)."""
    outcome = Outcome()
    work.mkdir(parents=True, exist_ok=True)
    clones = [_git_clone(url_of(tokens[n]), work / f"g{n}") for n in range(git_pushers)]
    mine = tokens[git_pushers : git_pushers + self_pushers]
    stores = [_self_clone(url_of(t), work / f"s{n}", t, f"s{n}") for n, t in enumerate(mine)]
    threads = [
        threading.Thread(target=_git_pusher, args=(c, f"g{n}", rounds, outcome, pause))
        for n, c in enumerate(clones)
    ]
    threads += [
        threading.Thread(target=_self_pusher, args=(s, t, f"s{n}", self_rounds, outcome))
        for n, (s, t) in enumerate(zip(stores, mine, strict=True))
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    outcome.seconds = time.perf_counter() - started
    return outcome


def missing(url: str, work: Path, acked: list[str]) -> list[str]:
    """The acknowledged ids a fresh clone of `url` lacks, and those it holds twice."""
    target = work / "final"
    gc.ok(work, "clone", "-q", url, str(target))
    held: list[str] = []
    for segment in sorted(target.glob("projects/*/log/*.jsonl")):
        held += [
            line[7:33].decode() for line in segment.read_bytes().splitlines() if line.startswith(b'{"id":"')
        ]
    counts: dict[str, int] = {}
    for event_id in held:
        counts[event_id] = counts.get(event_id, 0) + 1
    return sorted(i for i in acked if counts.get(i, 0) != 1)


def _git_clone(url: str, target: Path) -> Path:
    gc.ok(target.parent, "clone", "-q", url, str(target))
    return target


def _git_pusher(clone: Path, project: str, rounds: int, outcome: Outcome, pause: tuple[float, float]) -> None:
    home = clone.parent
    for n in range(rounds):
        made, text = gc.event(project, f"{project} round {n}")
        gc.append(clone, project, [text])
        gc.ok(home, "add", "-A", cwd=clone)
        gc.ok(home, "commit", "-qm", f"{project} {n}", cwd=clone)
        for rejected in range(MAX_TRIES):
            pushed = gc.git(home, "push", "-q", "origin", "main", cwd=clone)
            if pushed.returncode == 0:
                outcome.note([made], rejected)
                time.sleep(random.uniform(*pause))  # a person or an agent between two pushes
                break
            pulled = gc.git(home, "pull", "-q", "--rebase", "origin", "main", cwd=clone)
            if pulled.returncode != 0:
                outcome.failures.append(f"{project}: pull: {pulled.stderr.strip()[:300]}")
                return
        else:
            outcome.failures.append(f"{project}: push never went through")
            return


def _self_env(store: Path, token: str, project: str) -> dict[str, str]:
    return base_env() | {
        "SELF_TOKEN": token,
        "SELF_GIT_USERNAME": "ann",
        "SELF_WORKSPACE": str(store),
        "SELF_PROJECT": project,
    }


def _self_clone(url: str, target: Path, token: str, project: str) -> Path:
    plain = _without_credentials(url)
    env = _self_env(target, token, project)
    done = run_process(("clone", plain, str(target)), env)
    assert done.returncode == 0, done.stderr
    for args in (("project", "add", project), ("sync",)):
        done = run_process(args, env)
        assert done.returncode == 0, done.stderr
    return target


def _self_pusher(store: Path, token: str, project: str, rounds: int, outcome: Outcome) -> None:
    env = _self_env(store, token, project)
    for n in range(rounds):
        added = run_process(("idea", "add", f"{project} round {n}"), env)
        if added.returncode != 0:
            outcome.failures.append(f"{project}: add: {added.stderr.strip()[:300]}")
            return
        rejected = 0
        for _ in range(MAX_SYNCS):  # each sync retries by itself; a user runs it again after that
            synced = run_process(("sync",), env)
            if synced.returncode == 0 or "kept moving" not in " ".join(synced.stderr.split()):
                break
            rejected += 1
        if synced.returncode != 0:
            outcome.failures.append(f"{project}: sync: {synced.stderr.strip()[:300]}")
            return
        outcome.note(_log_ids(store, project)[-1:], rejected + _retries(synced.stdout))


def _retries(said: str) -> int:
    """The retries a sync's summary reports ("…, 3 retries, …")."""
    before, found, _ = said.partition(" retries")
    return int(before.rsplit(" ", 1)[-1]) if found and before.rsplit(" ", 1)[-1].isdigit() else 0


def _log_ids(store: Path, project: str) -> list[str]:
    held: list[str] = []
    for segment in sorted((store / "projects" / project / "log").glob("*.jsonl")):
        held += [line[7:33].decode() for line in segment.read_bytes().splitlines()]
    return held


def _without_credentials(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('@', 1)[-1]}"


assert GIT is not None, "the pushers need the git program"
