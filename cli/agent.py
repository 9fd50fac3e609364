"""`self agent`: what a coding agent reads to work with selfhub, installed into a checkout and
taken out again (service/app/agents.py), the managed block of AGENTS.md / CLAUDE.md, and the
context its session starts with."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from cli.common import OPTIONS, JsonOpt, echo, emit_json, workspace
from service.app.texts import escape

if TYPE_CHECKING:
    from service.app.agents import Source

AgentArg = typer.Argument(..., help="The agent: claude, codex, cursor or mcp (prints a client's config).")
DirOpt = typer.Option(".", "--dir", help="The checkout whose agent settings change (default: here).")
ServiceOpt = typer.Option(
    None,
    "--service",
    help="The workspace's URL on a service (http://HOST:PORT/git/WS.git); the token is read from "
    "SELF_TOKEN, else the one `self login` kept.",
)


def _source(service: str | None) -> Source:
    from service.app import agents
    from service.app.locate import project_slug

    return agents.Source(service, project_slug(OPTIONS.project), workspace)


def _warn(notes: list[str]) -> None:
    for note in notes:
        typer.echo(f"self: {escape(note)}", err=True)


def register(app: typer.Typer) -> None:
    agent = typer.Typer(help="A coding agent's setup: hooks, MCP server, the managed block, its context.")
    app.add_typer(agent, name="agent")

    @agent.command("install")
    def install(
        name: str = AgentArg,
        service: str | None = ServiceOpt,
        directory: str = DirOpt,
        as_json: bool = JsonOpt,
    ) -> None:
        """Write what the agent reads, merged with what is there: claude (hooks: context at session
        start, `self gate` before each tool call; .mcp.json), codex (the block in AGENTS.md, its MCP
        server in ~/.codex/config.toml), cursor (.cursor/mcp.json, .cursor/rules/selfhub.mdc); mcp
        prints a generic client's config. The server is `self mcp` (stdio), or SERVICE/mcp with
        --service. Installing again replaces what the last install added."""
        from service.app import agents

        done = agents.install(name, Path(directory), service, _source(service))
        if as_json or done.config is not None:
            return emit_json(done if as_json else done.config)
        _warn(done.notes)
        for hook in done.added:
            echo(f"added {hook.event}: {hook.command}")
        for hook in done.present:
            echo(f"there already {hook.event}: {hook.command}")
        for file in done.files:
            echo(f"wrote {file}")
        echo(f"`self agent uninstall {name}` takes out what was added")

    @agent.command("uninstall")
    def uninstall(name: str = AgentArg, directory: str = DirOpt, as_json: bool = JsonOpt) -> None:
        """Take out exactly what `self agent install` added (a file it made goes when empty)."""
        from service.app import agents

        done = agents.uninstall(name, Path(directory))
        if as_json:
            return emit_json(done)
        _warn(done.notes)
        for hook in done.removed:
            echo(f"removed {hook.event}: {hook.command}")
        for file in done.files:
            echo(f"took selfhub's part out of {file}")
        if not done.removed and not done.files:
            echo(f"nothing of selfhub's for {name} was installed here")

    @agent.command("block")
    def block(
        files: list[str] = typer.Option(
            [],
            "--file",
            help="A file to hold the block (repeatable; default AGENTS.md, and CLAUDE.md if there).",
        ),
        machine: bool = typer.Option(
            False,
            "--machine",
            help="The machine-level block: ~/.claude/CLAUDE.md, ~/.codex/AGENTS.md, ~/.gemini/GEMINI.md "
            "(for the agents whose folder exists).",
        ),
        service: str | None = typer.Option(
            None, "--service", help="Read the conventions from the workspace at this URL on a service."
        ),
        directory: str = DirOpt,
        as_json: bool = JsonOpt,
    ) -> None:
        """Write or refresh the managed block: the operating protocol and the current conventions
        between <!-- selfhub:begin vX --> and <!-- selfhub:end -->; nothing outside it changes, a
        Superself block is taken over in place, and a second run changes nothing."""
        from service.app import agents

        if machine:
            done = agents.machine_block(Path.home())
        else:
            done = agents.block(Path(directory), files, _source(service))
        _warn(agents.newer_notes(done))
        if as_json:
            return emit_json(done)
        for written in done:
            echo(f"{written.action} {written.file}")
        if machine and not done:
            echo("no agent's folder (~/.claude, ~/.codex, ~/.gemini) is on this machine: nothing written")

    @agent.command("context")
    def context(
        service: str | None = typer.Option(
            None, "--service", help="Read it from the workspace at this URL on a service."
        ),
    ) -> None:
        """What the session-start hook prints: the project's context, from the service when
        one is given (token: SELF_TOKEN or `self login`'s), else the local store; never fails the session. The
        checkout's managed blocks are refreshed on the way."""
        from service.app import agents
        from service.app.locate import project_slug

        echo(agents.session_context(service, project_slug(OPTIONS.project), workspace))
