"""The rough edges a first session meets, each through real processes: context on a real
terminal (a pseudo-terminal), a write's output, the same record twice (CLI, HTTP, MCP), search
saying what it left out (CLI, API, web), a linked checkout with no environment, a clone of a
workspace the service does not have, and an agent uninstall that takes out what it made."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import termios
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.support.selfrun import SELF, TIMEOUT, Store, base_env, describe, run_self
from tests.support.serving import Service, admin, token

pytestmark = pytest.mark.process  # every `self` here is a real process

WS, SLUG = "acme", "web"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def on_a_terminal(args: list[str], env: dict[str, str], cwd: Path, columns: int = 100) -> str:
    """What `self ARGS` prints on a pseudo-terminal `columns` wide (stdout and stderr)."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    terminal = {k: v for k, v in env.items() if k != "NO_COLOR"} | {"TERM": "xterm-256color"}
    proc = subprocess.Popen([SELF, *args], stdin=child, stdout=child, stderr=child, env=terminal, cwd=cwd)
    os.close(child)
    out = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    assert proc.wait(timeout=TIMEOUT) == 0, out
    return out.decode("utf-8")


# --- the terminal view ------------------------------------------------------------------------


def test_context_on_a_terminal_is_styled_not_escaped(store: Store) -> None:
    store.ok("goal", "add a cache")
    shown = on_a_terminal(["context"], store.env(), store.cwd)
    assert "\\u001b" not in shown, f"rich's styles were escaped: {shown!r}"
    assert ANSI.search(shown), f"no terminal style at all: {shown!r}"
    assert "add a cache" in ANSI.sub("", shown)
    assert "app" in ANSI.sub("", shown).split("\n")[0], "the project is the heading"


# --- a write's output ---------------------------------------------------------------------------


def test_a_write_prints_its_short_id_once_and_json_the_whole_one(store: Store) -> None:
    printed = store.ok("goal", "ship the importer")
    found = re.fullmatch(r"entity\.confirmed ([0-9a-z]{10,25})\n", printed)
    assert found, printed
    whole = store.add("goal", "ship the exporter")  # within the same second, most likely
    assert len(whole) == 26
    shown = store.json("state", "show", found[1])
    assert shown["text"] == "ship the importer" and shown["id"].startswith(found[1])


def test_each_short_id_printed_names_its_own_record_across_the_project_and_workspace_logs(
    store: Store,
) -> None:
    """Records written within a second share their first characters: each short id printed
    names its record where an id given here is looked up (this project's log, then the
    workspace's), then and after the next writes."""
    printed = {}
    for n in range(4):
        text = f"record {n}"
        where = ("--workspace",) if n % 2 else ()
        printed[text] = store.ok("goal", text, *where).split()[1]
    for text, short in printed.items():
        assert store.json("state", "show", short)["text"] == text, (short, printed)


# --- the same record twice ----------------------------------------------------------------------


def test_the_same_record_twice_is_refused_naming_the_first(store: Store) -> None:
    first = store.add("goal", "add a cache")
    again = store.run("goal", "add a cache")
    assert again.returncode == 2, describe(again)
    said = again.stderr
    assert said.count("\n") == 1 and first in said and "--duplicate" in said, said
    assert again.stdout == ""
    assert [r["text"] for r in store.rows("--label", "goal")] == ["add a cache"]

    store.ok("goal", "add a cache", "--duplicate")
    assert [r["text"] for r in store.rows("--label", "goal")] == ["add a cache"] * 2


def test_another_label_a_superseding_record_or_a_closed_one_is_no_duplicate(store: Store) -> None:
    goal = store.add("goal", "add a cache")
    store.ok("idea", "add a cache")  # another label
    store.ok("goal", "add a cache", "--supersedes", goal)  # it replaces the one it repeats
    convention = store.add("convention", "tests first")
    store.ok("state", "retract", convention, "--why", "not ours")
    store.ok("convention", "tests first")  # the first is no longer live
    refused = store.run("convention", "tests first")
    assert refused.returncode == 2, describe(refused)


def test_a_record_context_does_not_show_is_seen_too(store: Store) -> None:
    """Work units and ideas sit outside the hot slice a write reads on a store on disk: the
    write reads those with its text from the cold table."""
    for verb, text in (("work", "write the docs"), ("idea", "a dark theme")):
        first = store.add(verb, text)
        again = store.run(verb, text)
        assert again.returncode == 2 and first in again.stderr, describe(again)


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, str, Path]]:
    """A service with workspace acme (project web, a goal, a search-exposure idea) and a
    writer's token."""
    tmp = tmp_path_factory.mktemp("rough")
    data = tmp / "data"
    admin(data, "workspace", "add", WS)
    admin(data, "user", "add", "ann")
    writer = token(data, "ann", WS, "writer")
    service = Service(data, tmp / "serve.log")
    env = base_env() | {"SELF_WORKSPACE": str(data / "workspaces" / WS)}
    for args in (
        ("project", "add", SLUG),
        ("goal", "add a cache"),
        ("idea", "cache the context render", "--exposure", "search"),
    ):
        proc = run_self(args, env | {"SELF_PROJECT": SLUG})
        assert proc.returncode == 0, describe(proc)
    service.wait("/readyz")
    yield service, writer, tmp
    assert service.stop() == 0


def test_the_same_record_twice_over_http_is_a_409_naming_the_first(team: tuple[Service, str, Path]) -> None:
    service, writer, _ = team
    body = {"command": "add", "preset": "goal", "text": "add a cache"}
    with service.client(writer) as client:
        url = f"/api/v1/workspaces/{WS}/commands"
        refused = client.post(url, params={"project": SLUG}, json=body)
        assert refused.status_code == 409, refused.text
        problem = refused.json()
        assert problem["code"] == "duplicate" and problem["field"] == "duplicate", problem
        assert re.search(r"\b01[0-9a-z]{24}\b", problem["detail"]), problem
        added = client.post(url, params={"project": SLUG}, json=body | {"duplicate": True})
        assert added.status_code == 201, added.text
        work = {"command": "add", "preset": "work", "text": "write the docs"}
        assert client.post(url, params={"project": SLUG}, json=work).status_code == 201
        assert client.post(url, params={"project": SLUG}, json=work).status_code == 409


def test_the_same_record_twice_over_mcp_is_refused_unless_duplicate(team: tuple[Service, str, Path]) -> None:
    service, writer, _ = team

    async def session(client: Any) -> list[tuple[str, bool]]:
        answers = []
        for extra in ({}, {"duplicate": True}):
            args = {"project": SLUG, "kind": "idea", "text": "write a changelog"}
            for _ in range(2 if not extra else 1):
                got = await client.call_tool("record", args | extra)
                answers.append(("".join(p.text for p in got.content), bool(got.is_error)))
        return answers

    first, again, forced = over_mcp(f"{service.url}/mcp", writer, session)
    assert not first[1] and first[0].startswith("entity.confirmed "), first
    assert again[1] and "says this already" in again[0], again
    assert first[0].split()[1] in again[0], "the refusal names the record it repeats"
    assert not forced[1], forced


def over_mcp(url: str, secret: str, session: Any) -> Any:
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


# --- search says what it left out -----------------------------------------------------------------


def test_search_says_how_many_matches_context_shows(store: Store) -> None:
    store.ok("goal", "add a cache")
    store.ok("idea", "cache the context render")
    assert store.ok("search", "cache").splitlines()[-1] == (
        "1 match; 1 more that context shows left out (--all lists them)"
    )
    assert store.ok("search", "cache", "--all").splitlines()[-1] == "2 matches"
    assert store.ok("search", "nothing-like-it").splitlines()[-1] == "0 matches"


def test_the_api_and_the_web_say_how_many_search_left_out(team: tuple[Service, str, Path]) -> None:
    service, writer, _ = team
    with service.client(writer) as client:
        default = client.get("/api/v1/search", params={"q": "cache", "project": SLUG}).json()
        every = client.get("/api/v1/search", params={"q": "cache", "all": "1"}).json()
        one = client.get("/api/v1/search", params={"q": "cache", "exposure": "full"}).json()
    assert default["hidden"] >= 1 and default["matched"] == 1, default
    assert every["matched"] == default["matched"] + default["hidden"] and every["hidden"] == 0, every
    assert one["hidden"] == 0, one
    with httpx.Client(base_url=service.url, timeout=30) as browser:
        signed = browser.post("/signin", data={"token": writer, "next": "/"})
        assert signed.status_code == 303, signed.text
        page = browser.get("/search", params={"q": "cache"})
    count = re.search(r'<p id="count"[^>]*>(.*?)</p>', page.text, re.S)
    assert count, page.text
    assert f"{default['hidden']} more that context shows left out" in count[1], count[1]


# --- a linked checkout ------------------------------------------------------------------------------


def test_a_linked_checkout_needs_no_environment(store: Store, tmp_path: Path) -> None:
    checkout = tmp_path / "code"
    (checkout / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    linked = run_self(("project", "link", "app"), store.env({"SELF_PROJECT": None}), cwd=checkout)
    assert linked.returncode == 0, describe(linked)
    store.ok("goal", "ship from the checkout")
    bare = run_self(("context", "--plain"), base_env(), cwd=checkout / "src")
    assert bare.returncode == 0, describe(bare)
    assert "ship from the checkout" in bare.stdout
    wrote = run_self(("goal", "written from the checkout"), base_env(), cwd=checkout)
    assert wrote.returncode == 0, describe(wrote)
    assert "written from the checkout" in [r["text"] for r in store.rows()]


# --- a clone of a workspace the service lacks ------------------------------------------------------


def test_cloning_an_unknown_workspace_says_so(team: tuple[Service, str, Path]) -> None:
    service, writer, tmp = team
    proc = run_self(
        ("clone", f"{service.url}/git/nowhere.git", str(tmp / "nowhere")), base_env() | {"SELF_TOKEN": writer}
    )
    assert proc.returncode == 1, describe(proc)
    assert "no workspace nowhere on this service, or this token may not read it" in proc.stderr, proc.stderr
    assert "unexpected http resp" not in proc.stderr and writer not in proc.stderr, proc.stderr
    assert not (tmp / "nowhere").exists()


# --- agent uninstall ---------------------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["claude", "codex", "cursor"])
def test_uninstall_takes_out_every_file_and_folder_install_made(
    store: Store, tmp_path: Path, agent: str
) -> None:
    checkout, home = tmp_path / "code", tmp_path / "home"
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    before = sorted(p for p in [*checkout.rglob("*"), *home.rglob("*")] if ".git" not in p.parts)
    env = store.env({"HOME": str(home), "CODEX_HOME": None})
    for args in (("install", agent), ("install", agent), ("uninstall", agent)):
        proc = run_self(("agent", *args), env, cwd=checkout)
        assert proc.returncode == 0, describe(proc)
    after = sorted(p for p in [*checkout.rglob("*"), *home.rglob("*")] if ".git" not in p.parts)
    left = {str(p): p.read_text() if p.is_file() else "(folder)" for p in after if p not in before}
    assert not left, f"uninstall left what install made: {json.dumps(left)}"
