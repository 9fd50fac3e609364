"""The agents' tools over the Model Context Protocol, driven by the official SDK's client:
the service's `/mcp` of a real `self serve` process (its tokens and roles), `self mcp` over
stdio on the local store and relayed to the service, and each tool's answer against the CLI's
for the same question; and a client none of us wrote, the MCP Inspector's CLI mode."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from service.adapters.store import Store
from tests.support.selfrun import SELF, base_env, describe, run_self
from tests.support.serving import Service, admin, token, token_id

WS, SLUG = "acme", "web"
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
Session = Callable[[Any], Awaitable[Any]]


class Team:
    def __init__(self, data: Path, service: Service, writer: str, reader: str) -> None:
        self.data, self.service, self.writer, self.reader = data, service, writer, reader
        self.url = f"{service.url}/mcp"

    @property
    def store(self) -> Path:
        return self.data / "workspaces" / WS

    def env(self) -> dict[str, str]:
        return base_env() | {"SELF_WORKSPACE": str(self.store), "SELF_PROJECT": SLUG}

    def cli(self, *args: str, input: str | None = None) -> str:
        proc = run_self(args, self.env(), input)
        assert proc.returncode == 0, describe(proc)
        return proc.stdout.rstrip("\n")

    def head(self) -> str | None:
        with Store.open(self.store) as store:
            return store.head()


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    tmp = tmp_path_factory.mktemp("mcp")
    data = tmp / "data"
    admin(data, "workspace", "add", WS)
    admin(data, "user", "add", "ann")
    writer, reader = token(data, "ann", WS, "writer"), token(data, "ann", WS, "reader")
    made = Team(data, Service(data, tmp / "serve.log"), writer, reader)
    made.cli("project", "add", SLUG, "--desc", "the web app")
    made.cli("goal", "Ship the agents' tools")
    made.cli("decide", "Serve the tools over stdio and HTTP", "--why", "agents run both")
    made.service.wait("/readyz")
    yield made
    assert made.service.stop() == 0


def over_http(url: str, secret: str, session: Session) -> Any:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def run() -> Any:
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {secret}"}) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await session(client)

    return anyio.run(run)


def over_stdio(env: dict[str, str], session: Session, *args: str) -> Any:
    from mcp import Client, StdioServerParameters

    async def run() -> Any:
        async with Client(StdioServerParameters(command=SELF, args=["mcp", *args], env=env)) as client:
            return await session(client)

    return anyio.run(run)


def call(name: str, **arguments: Any) -> Session:
    async def session(client: Any) -> tuple[str, bool]:
        got = await client.call_tool(name, arguments)
        return "".join(part.text for part in got.content), bool(got.is_error)

    return session


def written_id(text: str) -> str:
    """The record a write's first line names (`entity.confirmed ID  (EVENT)`)."""
    found = re.match(r"\S+ (\w+)", text)
    assert found, text
    return found[1]


def test_no_token_is_401_and_nothing_reaches_the_tools(team: Team) -> None:
    revoked = token(team.data, "ann", WS, "writer")
    admin(team.data, "token", "revoke", token_id(team.data, revoked))
    for headers in (
        {},
        {"Authorization": "Bearer shb_not_a_token"},
        {"Authorization": "Basic !!"},
        {"Authorization": f"Bearer {revoked}"},
    ):
        answer = httpx.post(team.url, json=LIST, headers=ACCEPT | headers, timeout=10)
        assert answer.status_code == 401, answer.text
        assert answer.headers["content-type"] == "application/problem+json"
        assert answer.headers["www-authenticate"].startswith("Bearer")
        assert answer.json()["code"] == "unauthenticated"


def test_the_tool_list_is_lean(team: Team) -> None:
    answer = httpx.post(team.url, json=LIST, headers=ACCEPT | {"Authorization": f"Bearer {team.reader}"})
    assert answer.status_code == 200, answer.text
    listed = answer.json()["result"]["tools"]
    size = len(json.dumps({"tools": listed}))
    print(f"\ntools/list: {len(listed)} tools, {size} characters of JSON (about {size // 4} tokens)")
    assert [t["name"] for t in listed] == ["context", "search", "show", "record", "work", "review", "gate"]
    assert size <= 6000


def test_a_reader_reads_as_the_cli_and_cannot_write(team: Team) -> None:
    text, error = over_http(team.url, team.reader, call("context", project=SLUG, budget=400))
    assert not error
    assert text == team.cli("context", "--plain", "--budget", "400")
    text, error = over_http(team.url, team.reader, call("search", query="stdio", all=True))
    assert (text, error) == (team.cli("search", "stdio", "--all"), False)

    before = team.head()
    text, error = over_http(team.url, team.reader, call("record", project=SLUG, kind="idea", text="x"))
    assert error
    assert "reader" in text and "writer role" in text
    assert team.head() == before  # nothing written
    assert "x" not in team.cli("search", "x", "--all").split()


def test_a_writer_records_and_moves_work_and_show_is_the_clis(team: Team) -> None:
    def session(client: Any) -> list[tuple[str, bool]]:
        async def run() -> list[tuple[str, bool]]:
            done = [await call("record", project=SLUG, kind="work", text="Wire /mcp")(client)]
            unit = written_id(done[0][0])
            for action, extra in (("start", {}), ("report", {"text": "mounted", "artifact": "docs/x.md"})):
                done.append(await call("work", id=unit, action=action, **extra)(client))
            done.append(await call("work", id=unit, action="done", artifact="docs/x.md")(client))
            claim = await call("record", project=SLUG, kind="claim", text="The tools are lean")(client)
            done.append(claim)
            done.append(await call("review", id=written_id(claim[0]), state="accepted")(client))
            return done

        return run()

    answers = over_http(team.url, team.writer, session)
    assert [error for _, error in answers] == [False] * len(answers), answers
    unit = written_id(answers[0][0])
    assert answers[1][0].startswith(f"entity.started {unit}")
    assert f"entity.done {unit}" in answers[3][0]
    shown, error = over_http(team.url, team.reader, call("show", id=unit[:10]))
    assert not error
    assert shown == team.cli("state", "show", unit[:10], "--history")
    claim = written_id(answers[4][0])
    shown, _ = over_http(team.url, team.reader, call("show", id=claim))
    assert shown == team.cli("state", "show", claim, "--history")
    assert "accepted" in shown


def test_bad_arguments_are_the_tools_error_naming_them(team: Team) -> None:
    text, error = over_http(team.url, team.writer, call("record", project=SLUG, kind="memo", text="t"))
    assert error and "kind" in text
    text, error = over_http(team.url, team.reader, call("show", id="zzzzzz"))
    assert error and "zzzzzz" in text
    text, error = over_http(team.url, team.reader, call("context", project=SLUG, colour="red"))
    assert error and "colour" in text


def test_the_services_gate_reads_no_file_of_its_machine(team: Team) -> None:
    """A redirection that overwrites a file asks, one to a new file does not: on the service,
    whose files are not the agent's, no fact is read and every such call asks (no oracle of
    which paths exist there)."""

    def overwrite(path: Path) -> Session:
        return call("gate", tool_name="Bash", tool_input={"command": f"echo x > {path}"})

    there, missing = team.data / "auth.sqlite", team.data / "no-such-file"
    assert there.is_file() and not missing.exists()
    local = [
        json.loads(text)["decision"]
        for text, _ in over_stdio(team.env(), calls(overwrite(there), overwrite(missing)))
    ]
    assert local == ["ask", "allow"]  # the fact matters where the checkout is this machine's
    remote = [
        json.loads(text)["decision"]
        for text in (over_http(team.url, team.reader, overwrite(p))[0] for p in (there, missing))
    ]
    assert remote == ["ask", "ask"]


def calls(*sessions: Session) -> Session:
    """The sessions one after another on one connection: their answers in order."""

    async def session(client: Any) -> list[Any]:
        return [await each(client) for each in sessions]

    return session


async def _names(client: Any) -> list[str]:
    return [tool.name for tool in (await client.list_tools()).tools]


def test_stdio_serves_the_local_store_as_the_cli(team: Team) -> None:
    planned = {"tool_name": "Bash", "tool_input": {"command": "git push --force origin main"}}
    before = team.cli("context", "--plain")
    names, context, gate, recorded = over_stdio(
        team.env(),
        calls(
            _names,
            call("context", project=SLUG),
            call("gate", **planned),
            call("record", project=SLUG, kind="convention", text="Tools answer as the CLI"),
        ),
    )
    assert names == ["context", "search", "show", "record", "work", "review", "gate"]
    assert context == (before, False)
    assert not gate[1]
    assert json.loads(gate[0]) == json.loads(team.cli("gate", input=json.dumps(planned)))
    assert not recorded[1]
    assert "Tools answer as the CLI" in team.cli("state", "show", written_id(recorded[0]))


def test_stdio_relays_to_the_service_with_the_token(team: Team) -> None:
    idea = call("record", project=SLUG, kind="idea", text="relayed")
    env = base_env() | {"SELF_TOKEN": team.reader}
    context, refused = over_stdio(env, calls(call("context", project=SLUG), idea), "--service", team.url)
    assert context == (team.cli("context", "--plain"), False)
    assert refused[1] and "writer role" in refused[0]

    writes = base_env() | {"SELF_TOKEN": team.writer}
    text, error = over_stdio(writes, idea, "--service", team.service.url)
    assert not error
    assert "relayed" in team.cli("state", "show", written_id(text))


def test_stdio_without_a_token_for_the_service_says_what_to_set(team: Team) -> None:
    proc = subprocess.run(
        [SELF, "mcp", "--service", team.service.url],
        env=base_env() | {"HOME": str(team.data)},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 1
    assert "SELF_TOKEN" in proc.stderr


INSPECTOR = ["npx", "-y", "@modelcontextprotocol/inspector@latest", "--cli"]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npx") is None, reason="needs npx (apt: nodejs npm)")
def test_the_mcp_inspector_lists_and_calls_the_tools(team: Team) -> None:
    auth = ["--header", f"Authorization: Bearer {team.reader}"]

    def inspector(*args: str) -> Any:
        proc = subprocess.run(
            [*INSPECTOR, team.url, "--transport", "http", *auth, *args],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout)

    listed = inspector("--method", "tools/list")
    assert len(listed["tools"]) == 7
    got = inspector("--method", "tools/call", "--tool-name", "context", "--tool-arg", f"project={SLUG}")
    assert got["isError"] is False
    assert got["content"][0]["text"] == team.cli("context", "--plain")
