"""`self agent`: a coding agent's hooks in a checkout (install, uninstall) and the context its
session starts with (service/app/agents.py)."""

from __future__ import annotations

from pathlib import Path

import typer

from cli.common import OPTIONS, JsonOpt, echo, emit_json, workspace

AgentArg = typer.Argument(..., help="The agent: claude.")
DirOpt = typer.Option(".", "--dir", help="The checkout whose agent settings change (default: here).")


def register(app: typer.Typer) -> None:
    agent = typer.Typer(help="A coding agent's hooks: its session's context and the action gate.")
    app.add_typer(agent, name="agent")

    @agent.command("install")
    def install(
        name: str = AgentArg,
        service: str | None = typer.Option(
            None, "--service", help="The workspace's URL on a service (http://HOST:PORT/git/WS.git)."
        ),
        directory: str = DirOpt,
        as_json: bool = JsonOpt,
    ) -> None:
        """Add the hooks to the checkout's agent settings (.claude/settings.json), merging:
        context at session start, `self gate` before each tool call."""
        from service.app import agents

        done = agents.install(name, Path(directory), service)
        if as_json:
            return emit_json(done)
        for hook in done.added:
            echo(f"added {hook.event}: {hook.command}")
        for hook in done.present:
            echo(f"there already {hook.event}: {hook.command}")
        echo(f"in {done.settings}; `self agent uninstall {name}` takes out what was added")

    @agent.command("uninstall")
    def uninstall(name: str = AgentArg, directory: str = DirOpt, as_json: bool = JsonOpt) -> None:
        """Take out exactly the hooks `self agent install` added."""
        from service.app import agents

        done = agents.uninstall(name, Path(directory))
        if as_json:
            return emit_json(done)
        for hook in done.removed:
            echo(f"removed {hook.event}: {hook.command}")
        if not done.removed:
            echo("no hook of selfhub's was installed here")

    @agent.command("context")
    def context(
        service: str | None = typer.Option(
            None, "--service", help="Read it from the workspace at this URL on a service."
        ),
    ) -> None:
        """What the session-start hook prints: the project's context, from the service when
        one is given (token: SELF_TOKEN), else the local store; never fails the session."""
        from service.app import agents
        from service.app.locate import project_slug

        echo(agents.session_context(service, project_slug(OPTIONS.project), workspace))
