"""Store and project administration: init, project, alias, tokens, import, help."""

from __future__ import annotations

from pathlib import Path

import typer

from cli.common import OPTIONS, JsonOpt, echo, run, show, workspace
from service.app import settings, texts
from service.core.errors import Invalid

HELP_TOPICS = {"sanitize": settings.sanitize_rules}


def _overview(app: typer.Typer) -> str:
    """The whole app's help (this process may hold only the `help` command), then the topics."""
    from typer import _click as click

    group = typer.main.get_command(app)
    with click.Context(group, info_name="self") as ctx:
        usage = group.get_help(ctx)
    topics = ", ".join(f"`self help {name}`" for name in HELP_TOPICS)
    return f"{usage}\n\nTopics: {topics}"


def register(app: typer.Typer) -> None:
    @app.command("init")
    def init(
        directory: str | None = typer.Argument(
            None, help="Where to create the store (default: --workspace, SELF_WORKSPACE or .)."
        ),
        as_json: bool = JsonOpt,
    ) -> None:
        """Create a workspace store (a git repository) in DIR."""
        show(settings.init_store(directory or OPTIONS.workspace), as_json, texts.created)

    project = typer.Typer(no_args_is_help=True, add_completion=False, help="Projects of the workspace.")
    app.add_typer(project, name="project")

    @project.command("add")
    def project_add(
        slug: str,
        desc: str | None = typer.Option(None, "--desc", help="One-line description."),
        as_json: bool = JsonOpt,
    ) -> None:
        """Register a project."""
        from service.core.commands.requests import ProjectAdd

        run(ProjectAdd(slug=slug, description=desc), as_json)

    @project.command("list")
    def project_list(as_json: bool = JsonOpt) -> None:
        """Every project, with its description and whether it is archived."""
        show(settings.projects(workspace()), as_json, texts.projects)

    @project.command("archive")
    def project_archive(slug: str, why: str = typer.Option(..., "--why"), as_json: bool = JsonOpt) -> None:
        """Archive a project (its log stays; context hides it)."""
        from service.core.commands.requests import ProjectArchive

        run(ProjectArchive(slug=slug, why=why), as_json)

    @project.command("restore")
    def project_restore(slug: str, as_json: bool = JsonOpt) -> None:
        """Bring an archived project back."""
        from service.core.commands.requests import ProjectRestore

        run(ProjectRestore(slug=slug), as_json)

    @project.command("link")
    def project_link(
        slug: str, path: str = typer.Argument(".", help="The checkout (default: here).")
    ) -> None:
        """Mark a checkout as belonging to a project (commands run there select it)."""
        OPTIONS.project = slug
        where = workspace().link_checkout(Path(path))
        echo(f"linked {where} to project {slug}")

    @app.command("alias")
    def alias(
        action: str | None = typer.Argument(None, help="set | add | restore (none: print the table)."),
        verb: str | None = typer.Argument(None),
        label: str | None = typer.Option(None, "--label"),
        exposure: str | None = typer.Option(None, "--exposure"),
        priority: int | None = typer.Option(None, "--priority"),
        as_json: bool = JsonOpt,
    ) -> None:
        """Print the merged alias table, or set, add or restore a row."""
        ws = workspace()
        if action is None:
            rows = settings.aliases(ws)
        else:
            rows = settings.edit_alias(ws, action, verb, label, exposure, priority)
        show(rows, as_json, texts.aliases)

    @app.command("tokens")
    def tokens(
        set_: float | None = typer.Option(None, "--set", help="Tokens per character, from a measurement."),
        as_json: bool = JsonOpt,
    ) -> None:
        """Print (or set) the tokens-per-character estimate caps and budgets are measured with."""
        show(settings.tokens(workspace(), set_), as_json, texts.tokens)

    @app.command("help")
    def help_command(
        topic: str | None = typer.Argument(None, help=f"A topic: {', '.join(HELP_TOPICS)}."),
    ) -> None:
        """The commands, or help on a topic (`self help sanitize`: what the record refuses)."""
        if topic is None:
            echo(_overview(app))  # the whole app `register` was given
        elif topic in HELP_TOPICS:
            echo(HELP_TOPICS[topic]())
        else:
            raise Invalid(
                f"no help topic {topic!r}; topics: {', '.join(HELP_TOPICS)} "
                "(a command's own help: `self COMMAND --help`)"
            )

    imports = typer.Typer(no_args_is_help=True, add_completion=False, help="Bring in state from other tools.")
    app.add_typer(imports, name="import")

    @imports.command("superself")
    def import_superself(path: str, as_json: bool = JsonOpt) -> None:
        """Import a Superself store (registry.jsonl, projects/<slug>/log.jsonl), every event kept."""
        show(settings.import_superself(workspace(), path), as_json, texts.superself_imported)


def register_data(admin: typer.Typer) -> None:
    """`self admin backup`, `restore`, `upgrade`: the data directory as a whole (registered
    by cli/team.py beside the other `self admin` commands)."""
    data_opt = typer.Option(..., "--data", envvar="SELF_DATA", help="The service's data directory.")

    @admin.command("backup")
    def backup(
        data: str = data_opt,
        to: str = typer.Option(..., "--to", help="The new file to write the backup to (a .tar.gz)."),
        as_json: bool = JsonOpt,
    ) -> None:
        """Back up DATA while the service runs: its workspaces, users, tokens and backends."""
        from service.app import backup as backups

        show(backups.backup(data, to), as_json, lambda made: f"backed up to {to}\n{backups.summary(made)}")

    @admin.command("restore")
    def restore(
        file: str = typer.Argument(..., help="A file `self admin backup` wrote."),
        data: str = typer.Option(..., "--data", help="A new or empty folder to restore into."),
        as_json: bool = JsonOpt,
    ) -> None:
        """Restore a backup into a new data directory, then verify it (git fsck, the counts)."""
        from service.app import backup as backups

        show(
            backups.restore(file, data), as_json, lambda made: f"restored to {data}\n{backups.summary(made)}"
        )

    @admin.command("upgrade")
    def upgrade(
        data: str = data_opt,
        backup_to: str = typer.Option(
            ..., "--backup", help="The new file the backup made before upgrading is written to."
        ),
        as_json: bool = JsonOpt,
    ) -> None:
        """Upgrade DATA to this release's format, after a backup; the service must be stopped."""
        from service.app import upgrade as upgrades

        show(upgrades.upgrade(data, backup_to), as_json, upgrades.text)
