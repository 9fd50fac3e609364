"""Logging in once to a real `self serve` process (`self login`, `self whoami`, `self logout`),
then cloning, syncing, reading the agent's context and relaying MCP calls with no SELF_TOKEN;
a token from SELF_TOKEN_FILE; and who signs the CLI's writes: the login, else `self config
user`, else git's user.name, never the operating system's login name."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.support.selfrun import SELF, base_env, describe, run_process, run_self
from tests.support.serving import Service, admin, token

WS, SLUG, USER = "acme", "app", "ann"


class Hosted:
    def __init__(self, tmp: Path) -> None:
        self.data = tmp / "data"
        admin(self.data, "workspace", "add", WS)
        admin(self.data, "user", "add", USER)
        self.writer = token(self.data, USER, WS, "writer")
        env = base_env() | {"SELF_WORKSPACE": str(self.data / "workspaces" / WS), "SELF_USER": USER}
        for args in (("project", "add", SLUG), ("goal", "add", "log in once"), ("--project", SLUG)):
            if args[0] != "--project":
                made = run_self(args, env | {"SELF_PROJECT": SLUG})
                assert made.returncode == 0, describe(made)
        self.service = Service(self.data, tmp / "serve.log")
        self.service.wait("/readyz")
        self.url = self.service.url
        self.git_url = f"{self.url}/git/{WS}.git"

    def events(self) -> list[dict[str, Any]]:
        """The project's events as the service's API answers them."""
        with self.service.client(self.writer) as client:
            answer = client.get(f"/api/v1/workspaces/{WS}/projects/{SLUG}/events")
        assert answer.status_code == 200, answer.text
        rows: list[dict[str, Any]] = answer.json()["events"]
        return rows


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hosted]:
    made = Hosted(tmp_path_factory.mktemp("login"))
    yield made
    assert made.service.stop() == 0


def person(tmp: Path, **extra: str) -> dict[str, str]:
    """A person's environment of their own: config folder, no git identity, a login name the
    operating system would give (which must never sign anything)."""
    return base_env() | {
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "HOME": str(tmp / "home"),
        "GIT_CONFIG_GLOBAL": str(tmp / "no-gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "USER": "oslogin",
        "LOGNAME": "oslogin",
        **extra,
    }


def ok(args: tuple[str, ...], env: dict[str, str], input: str | None = None, cwd: Path | None = None) -> str:
    done = run_self(args, env, input, cwd)
    assert done.returncode == 0, describe(done)
    return done.stdout


def login(hosted: Hosted, env: dict[str, str], url: str | None = None) -> str:
    """`self login` as a real process, the token on its stdin."""
    done = run_process(("login", url or hosted.url), env, input=hosted.writer + "\n")
    assert done.returncode == 0, describe(done)
    return done.stdout


def test_login_checks_the_token_keeps_it_and_whoami_and_logout_read_it(
    hosted: Hosted, tmp_path: Path
) -> None:
    env = person(tmp_path)
    said = login(hosted, env, hosted.git_url)  # any URL on the service names it
    assert said.strip() == f"logged in to {hosted.url} as {USER} (writer of {WS})"
    assert hosted.writer not in said
    kept = tmp_path / "config" / "selfhub" / "credentials"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    entry = json.loads(kept.read_text())[hosted.url]
    assert entry | {"token": "-"} == {
        "token": "-",
        "username": "selfhub",
        "user": USER,
        "workspace": WS,
        "role": "writer",
    }
    assert entry["token"] == hosted.writer

    assert ok(("whoami",), env).strip() == f"{USER}  {WS}  writer  {hosted.url}"
    rows = json.loads(ok(("whoami", "--json"), env))
    assert rows == [{"service": hosted.url, "user": USER, "workspace": WS, "role": "writer"}]

    assert ok(("logout",), env).strip() == f"logged out of {hosted.url} ({USER})"
    assert hosted.url not in json.loads(kept.read_text())
    gone = run_self(("whoami",), env)
    assert gone.returncode == 1
    assert gone.stderr.strip() == "self: not logged in: run `self login URL` (`self whoami` lists the logins)"


def test_a_token_the_service_does_not_know_is_refused_and_nothing_is_kept(
    hosted: Hosted, tmp_path: Path
) -> None:
    env = person(tmp_path)
    done = run_process(("login", hosted.url), env, input="shb_" + "x" * 43 + "\n")
    assert done.returncode == 1, describe(done)
    assert len(done.stderr.strip().splitlines()) == 1
    assert "does not know that token (401)" in done.stderr
    assert not (tmp_path / "config" / "selfhub" / "credentials").exists()


def test_login_takes_no_token_from_the_command_line(hosted: Hosted, tmp_path: Path) -> None:
    env = person(tmp_path)
    argv = run_self(("login", hosted.url, hosted.writer), env)
    assert argv.returncode == 1
    assert "never taken from the command line" in argv.stderr
    assert hosted.writer not in argv.stderr
    empty = run_self(("login", hosted.url), env, input="")
    assert empty.returncode == 1
    assert "no token given; `self login URL` reads one from stdin" in empty.stderr
    bad = run_self(("login", "ftp://127.0.0.1/x"), env, input=hosted.writer)
    assert bad.returncode == 1
    assert "not a service URL" in bad.stderr


def test_after_login_clone_sync_log_and_history_need_no_token_and_show_the_author(
    hosted: Hosted, tmp_path: Path
) -> None:
    env = person(tmp_path)
    login(hosted, env)
    clone = tmp_path / "clone"
    ok(("clone", hosted.git_url, str(clone)), env)
    mine = env | {"SELF_WORKSPACE": str(clone), "SELF_PROJECT": SLUG}
    written = ok(("goal", "add", "signed by the login"), mine)
    record = written.split()[1]
    ok(("sync",), mine)

    landed = next(e for e in hosted.events() if e["payload"].get("text") == "signed by the login")
    assert landed["origin"]["by"] == USER
    assert "pushed_by" not in landed  # pushed by the user it claims
    line = next(x for x in ok(("log",), mine).splitlines() if record in x)
    assert f"  human  {USER}  entity.confirmed" in line
    history = ok(("state", "show", record, "--history"), mine)
    assert f"  {USER}  entity.confirmed" in history


def test_after_login_the_agents_session_context_needs_no_token(hosted: Hosted, tmp_path: Path) -> None:
    env = person(tmp_path)
    login(hosted, env)
    context = ok(("agent", "context", "--service", hosted.git_url), env | {"SELF_PROJECT": SLUG})
    assert "log in once" in context
    assert "gave no context" not in context


@pytest.mark.slow
def test_after_login_self_mcp_relays_to_the_service_with_no_token(hosted: Hosted, tmp_path: Path) -> None:
    env = person(tmp_path)
    login(hosted, env)
    from mcp import Client, StdioServerParameters

    async def relayed() -> tuple[str, bool]:
        server = StdioServerParameters(command=SELF, args=["mcp", "--service", hosted.url], env=env)
        async with Client(server) as client:
            got = await client.call_tool("context", {"project": SLUG})
            return "".join(part.text for part in got.content), bool(got.is_error)

    text, error = anyio.run(relayed)
    assert not error, text
    assert "log in once" in text


def test_a_token_file_serves_as_self_token(hosted: Hosted, tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text(hosted.writer + "\n")  # as a mounted secret holds it
    env = person(tmp_path, SELF_TOKEN_FILE=str(secret))
    ok(("clone", hosted.git_url, str(tmp_path / "clone")), env)
    assert (tmp_path / "clone" / "workspace.json").is_file()

    missing = person(tmp_path, SELF_TOKEN_FILE=str(tmp_path / "absent"))
    done = run_self(("clone", hosted.git_url, str(tmp_path / "other")), missing)
    assert done.returncode == 1
    assert f"SELF_TOKEN_FILE={tmp_path / 'absent'} cannot be read" in done.stderr


def test_the_whoami_route_answers_the_tokens_user_workspace_and_role(hosted: Hosted) -> None:
    with hosted.service.client(hosted.writer) as client:
        answer = client.get("/api/v1/whoami")
    assert answer.status_code == 200
    assert answer.json() == {"user": USER, "workspace": WS, "role": "writer"}
    assert httpx.get(f"{hosted.url}/api/v1/whoami", timeout=10).status_code == 401


# --- who signs a write to a store no service logs in to --------------------------------------


def last_origin(env: dict[str, str]) -> dict[str, Any]:
    rows = json.loads(ok(("log", "-n", "1", "--json"), env))
    origin: dict[str, Any] = rows[-1]["origin"]
    return origin


@pytest.fixture
def local(tmp_path: Path) -> dict[str, str]:
    root = tmp_path / "store"
    env = person(tmp_path)
    ok(("init", str(root)), env)
    env |= {"SELF_WORKSPACE": str(root)}
    ok(("project", "add", SLUG), env)
    return env | {"SELF_PROJECT": SLUG}


def test_a_write_is_signed_by_gits_user_name_then_the_configured_name_then_self_user(
    local: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "no-gitconfig").write_text("[user]\n\tname = Grace Hopper\n")
    ok(("goal", "add", "signed by git's name"), local)
    assert last_origin(local)["by"] == "Grace Hopper"

    assert ok(("config", "user", "ada"), local).strip() == "ada"
    assert ok(("config", "user"), local).strip() == "ada"
    ok(("goal", "add", "signed by the configured name"), local)
    assert last_origin(local)["by"] == "ada"
    kept = json.loads((tmp_path / "config" / "selfhub" / "user.json").read_text())
    assert kept == {"user": "ada"}

    ok(("goal", "add", "signed by SELF_USER"), local | {"SELF_USER": "bob"})
    assert last_origin(local)["by"] == "bob"


def test_without_a_name_a_write_is_unsigned_never_the_os_login(local: dict[str, str], tmp_path: Path) -> None:
    ok(("goal", "add", "nobody said who"), local)
    assert "by" not in last_origin(local)
    store = Path(local["SELF_WORKSPACE"])
    logs = b"".join(p.read_bytes() for p in store.rglob("*.jsonl") if ".local" not in p.parts)
    assert b"oslogin" not in logs
    assert "oslogin" not in ok(("log",), local)


def test_a_name_that_cannot_sign_is_refused_with_what_to_do(local: dict[str, str], tmp_path: Path) -> None:
    done = run_self(("config", "user", "ada@example.com"), local)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "self: the name holds an email address: a user name is a handle such as `ada`; "
        "`self config user NAME` sets the name your writes carry"
    )
    assert not (tmp_path / "config" / "selfhub" / "user.json").exists()
    (tmp_path / "no-gitconfig").write_text("[user]\n\tname = /home/grace/bin\n")
    refused = run_self(("goal", "add", "a bad git name"), local)
    assert refused.returncode == 1
    assert "git's user.name cannot sign a write" in refused.stderr
    assert "`self config user NAME`" in refused.stderr
