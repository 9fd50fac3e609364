"""One write engine under every front end: the same commands given to the CLI, to `POST
…/commands` and, as the events the CLI wrote, to `POST …/events` and to a `git push` to the
service's git endpoint leave the same log bytes and the same state in each workspace.

The service runs in this process (uvicorn on a loopback port, in a thread) and the CLI runs
in-process too, so both read one pinned clock: the ids and times every path mints come out
equal, and the logs are compared byte for byte, not modulo their ids.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import msgspec
import pytest
import uvicorn

from service.adapters.store import Store, clock
from service.core.events.events import Event, as_dict
from tests.support.selfrun import base_env, describe, run_in_process
from tests.support.servers import free_port

# the routes declare their path parameters as litestar did before FromPath (a warning only)
pytestmark = pytest.mark.filterwarnings("ignore:.*declared using deprecated inferred style")
PINNED_MS = 1_795_000_000_000  # 2026-11-18T11:06:40Z: every id and time below is minted at it
USER = "ann"
GIVEN = ("type", "project", "payload", "refs", "id")  # what a post gives of an event
NAMED = {"goal": "goal", "work": "work", "claim": "claim", "decide": "decision"}  # records later steps name
SERVED = ("commands", "events", "push")  # a workspace of the service for each way in


def steps(n: dict[str, str]) -> list[tuple[tuple[str, ...], dict[str, object]]]:
    """(the CLI's arguments, the same command as a JSON body); `n` the ids made so far."""
    return (
        [
            (
                ("project", "add", "app", "--desc", "the app"),
                {"command": "project-add", "slug": "app", "description": "the app"},
            ),
            (
                ("goal", "ship it fast", "--why", "users wait"),
                {"command": "add", "preset": "goal", "text": "ship it fast", "why": "users wait"},
            ),
            (
                ("work", "add", "tidy up", "--criterion", "tidied"),
                {"command": "add", "preset": "work", "text": "tidy up", "criteria": ["tidied"]},
            ),
            (
                ("claim", "the parser is fast", "--evidence", "bench.txt"),
                {
                    "command": "add",
                    "preset": "claim",
                    "text": "the parser is fast",
                    "evidence": ["bench.txt"],
                },
            ),
            (
                ("decide", "use msgspec", "--choice", "msgspec", "--alternative", "json"),
                {
                    "command": "add",
                    "preset": "decide",
                    "text": "use msgspec",
                    "choice": "msgspec",
                    "alternatives": ["json"],
                },
            ),
        ]
        if not n
        else [
            (("work", "start", n["work"]), {"command": "start", "record": n["work"], "unit": True}),
            (
                ("report", n["work"], "tidied", "--commit", "c0ffee1"),
                {"command": "report", "record": n["work"], "text": "tidied", "commit": "c0ffee1"},
            ),
            (("state", "cover", n["work"], "1"), {"command": "cover", "record": n["work"], "criterion": "1"}),
            (
                ("work", "done", n["work"], "--why", "tidy"),
                {"command": "done", "record": n["work"], "unit": True, "why": "tidy"},
            ),
            (
                ("claim", "assess", n["claim"], "--state", "accepted"),
                {"command": "assess", "record": n["claim"], "state": "accepted"},
            ),
            (
                ("goal", "retract", n["goal"], "--why", "done elsewhere"),
                {"command": "retract", "record": n["goal"], "why": "done elsewhere"},
            ),
        ]
    )


@pytest.fixture
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every id and time the store's clock mints, in the CLI and in the service, is minted at
    one instant with the same random bits: the same writes give the same bytes."""
    monkeypatch.setattr(clock, "wall_ms", lambda: PINNED_MS)
    monkeypatch.setattr(clock, "secrets", SimpleNamespace(randbits=lambda bits: 0x5EED))


class Served:
    """The service of a data directory in this process, on a loopback port."""

    def __init__(self, data: Path) -> None:
        from service.server.bootstrap import build

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(build(data), host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="service", daemon=True)

    def __enter__(self) -> Served:
        self.thread.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1.0).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise AssertionError("the service was not ready within 30 s")

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        self.thread.join(30)


def cli(args: tuple[str, ...], env: dict[str, str]) -> str:
    done = run_in_process(args, env)
    assert done.returncode == 0, describe(done)
    return done.stdout


def admin(data: Path, *args: str) -> str:
    return cli(("admin", *args, "--data", str(data)), base_env())


@pytest.fixture
def data(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    for name in SERVED:
        admin(root, "workspace", "add", name)
    admin(root, "user", "add", USER)
    return root


def first_entity(written: str) -> str:
    payload = msgspec.json.decode(written)["events"][0]["payload"]
    return str(payload.get("entity") or payload.get("work"))


def logs(root: Path) -> dict[str, bytes]:
    """Every log segment of a store, by its path."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*.jsonl"))
        if ".git" not in p.parts and ".local" not in p.parts
    }


def events_of(root: Path) -> list[Event]:
    with Store.open(root) as store:
        return sorted((e for log in store.logs() for e in store.read(log).events), key=lambda e: e.id)


def state_of(root: Path) -> bytes:
    with Store.open(root) as store:
        return msgspec.json.encode([(log, store.state(log)[0]) for log in store.logs()])


def test_cli_commands_events_and_a_push_leave_the_same_log_bytes_and_state(
    data: Path, tmp_path: Path, pinned: None
) -> None:
    tokens = {
        ws: admin(data, "token", "create", USER, "--workspace", ws, "--role", "writer").strip()
        for ws in SERVED
    }
    with Served(data) as served:
        env = base_env() | {"SELF_TOKEN": tokens["push"], "SELF_USER": USER}
        mine = tmp_path / "mine"
        cli(("clone", f"{served.url}/git/push.git", str(mine)), env)
        env |= {"SELF_WORKSPACE": str(mine), "SELF_PROJECT": "app"}
        made: dict[str, str] = {}
        clients = {ws: served.client(tokens[ws]) for ws in SERVED}
        for batch in ({}, made):
            for args, body in steps(batch):
                written = cli((*args, "--json"), env)
                if not batch and args[0] in NAMED:
                    made[NAMED[args[0]]] = first_entity(written)
                answer = clients["commands"].post(
                    "/api/v1/workspaces/commands/commands", params={"project": "app"}, json=body
                )
                assert answer.status_code == 201, answer.text
        for event in events_of(mine):
            posted = {k: v for k, v in as_dict(event).items() if k in GIVEN}
            answer = clients["events"].post("/api/v1/workspaces/events/events", json={"events": [posted]})
            assert answer.status_code == 201, answer.text
        pushed = run_in_process(("sync",), env)
        assert pushed.returncode == 0 and "pushed" in pushed.stdout, describe(pushed)
        for client in clients.values():
            client.close()

    stores = {"cli": mine} | {name: data / "workspaces" / name for name in SERVED}
    written = {name: logs(root) for name, root in stores.items()}
    assert written["cli"], "the CLI wrote no log"
    assert written["commands"] == written["cli"]
    assert written["events"] == written["cli"]
    assert written["push"] == written["cli"]
    states = {name: state_of(root) for name, root in stores.items()}
    assert states["commands"] == states["events"] == states["push"] == states["cli"]
    assert len(events_of(mine)) == 11
