"""The CLI reference, docs/cli.md, made from the commands themselves.

`python -m cli.reference > docs/cli.md` writes it; `python -m cli.reference --check` exits 1
when docs/cli.md differs from what this prints (`tests/unit/test_cli_reference.py` holds the
file to it). It walks the whole click tree of `cli.main.app` — the app every process builds
commands from; `only_for` only picks one branch of it — and renders each command's usage, help
and parameters as Markdown: sorted by name, hidden commands and parameters left out, no
terminal width or colour involved, so the same code prints the same bytes everywhere. Verbs a
store's alias table adds at run time (`verbs.AliasAwareGroup`) are not in it: the default
alias table's verbs are.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import typer
from typer import _click as click
from typer.core import TyperArgument, TyperOption

TARGET = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
REGENERATE = "python -m cli.reference > docs/cli.md"

_TYPES = {
    "str": "TEXT",
    "text": "TEXT",
    "int": "INTEGER",
    "integer": "INTEGER",
    "float": "FLOAT",
    "bool": "BOOLEAN",
}


def commands() -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """(path under `self`, command) of `self` and every visible subcommand, sorted by path."""
    from cli.main import app

    def walk(
        command: click.Command, path: tuple[str, ...]
    ) -> Iterator[tuple[tuple[str, ...], click.Command]]:
        yield path, command
        for name, sub in sorted(_subcommands(command).items()):
            if not sub.hidden:
                yield from walk(sub, (*path, name))

    yield from walk(typer.main.get_command(app), ())


def _subcommands(command: click.Command) -> dict[str, click.Command]:
    found = getattr(command, "commands", None)
    return dict(found) if isinstance(found, dict) else {}


def _escape(text: str) -> str:
    """Markdown-safe prose: characters outside `code spans` that Markdown would read as markup."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        parts[i] = re.sub(r"([\\*<>])", r"\\\1", parts[i])
    return "`".join(parts)


def _paragraphs(text: str | None) -> list[str]:
    """A docstring's paragraphs, each one line (the source's hard wraps joined)."""
    body = inspect.cleandoc(text or "").replace("\b", "")
    return [" ".join(block.split()) for block in re.split(r"\n\s*\n", body) if block.strip()]


def _title(path: tuple[str, ...]) -> str:
    return " ".join(("self", *path))


def _anchor(path: tuple[str, ...]) -> str:
    return "-".join(("self", *path))


def _metavar(param: click.core.Parameter) -> str:
    if param.metavar:
        return param.metavar
    choices = getattr(param.type, "choices", None)
    if choices:
        return "|".join(str(c) for c in choices)
    return _TYPES.get(param.type.name, param.type.name.upper())


def _usage(path: tuple[str, ...], command: click.Command) -> str:
    pieces = [_title(path)]
    if any(isinstance(p, TyperOption) and not p.hidden for p in command.params):
        pieces.append("[OPTIONS]")
    for param in command.params:
        if isinstance(param, TyperArgument) and not getattr(param, "hidden", False):
            name = (param.metavar or param.name or "").upper()
            name += "..." if param.nargs == -1 else ""
            pieces.append(name if param.required else f"[{name}]")
    if _subcommands(command):
        pieces.append("COMMAND [ARGS]...")
    return " ".join(pieces)


def _default(param: click.core.Parameter) -> str | None:
    value = param.default
    if callable(value) or value in (None, False, "", [], ()) or getattr(param, "show_default", True) is False:
        return None
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def _param_line(param: click.core.Parameter) -> str:
    if isinstance(param, TyperOption):
        names = " / ".join([*param.opts, *param.secondary_opts])
        shown = names if param.is_flag else f"{names} {_metavar(param)}"
    else:
        shown = (param.metavar or param.name or "").upper()
    help_text = " ".join(_paragraphs(getattr(param, "help", None)))
    notes = []  # what the help text does not say already
    if param.required:
        notes.append("required")
    if param.multiple and "repeatable" not in help_text:
        notes.append("repeatable")
    default = _default(param)
    if default is not None and "default" not in help_text:
        notes.append(f"default: `{default}`")
    if param.envvar:
        envvars = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar)
        notes.append("env: " + ", ".join(f"`{e}`" for e in envvars))
    line = f"- `{shown}`"
    if help_text:
        line += f" — {_escape(help_text)}"
    if notes:
        line += f" ({'; '.join(notes)})"
    return line


def _section(path: tuple[str, ...], command: click.Command) -> list[str]:
    lines = [f"## {_title(path)}", ""]
    for paragraph in _paragraphs(command.help):
        lines += [_escape(paragraph), ""]
    lines += ["```", _usage(path, command), "```", ""]
    arguments = [p for p in command.params if isinstance(p, TyperArgument)]
    options = [p for p in command.params if isinstance(p, TyperOption) and not p.hidden]
    if arguments:
        lines += ["Arguments:", "", *(_param_line(p) for p in arguments), ""]
    if options:
        lines += ["Options:", "", *(_param_line(p) for p in options), ""]
    subs = {n: c for n, c in sorted(_subcommands(command).items()) if not c.hidden}
    if subs:
        lines += ["Commands:", ""]
        for name, sub in subs.items():
            first = _paragraphs(sub.help)[:1]
            summary = f" — {_escape(first[0])}" if first else ""
            lines.append(f"- [`{name}`](#{_anchor((*path, name))}){summary}")
        lines.append("")
    return lines


def render() -> str:
    """docs/cli.md, whole."""
    every = list(commands())
    lines = [
        "# CLI reference",
        "",
        "Every command of `self` with its arguments and options, generated from the commands",
        f"themselves: `{REGENERATE}` writes this file, and",
        "`tests/unit/test_cli_reference.py` fails when it differs from what the commands say.",
        "`self COMMAND --help` prints the same help; [commands.md](commands.md) is the overview,",
        "with exit codes and the environment.",
        "",
        "## Contents",
        "",
    ]
    for path, _ in every:
        indent = "  " * max(len(path) - 1, 0)
        lines.append(f"{indent}- [{_title(path)}](#{_anchor(path)})")
    lines.append("")
    for path, command in every:
        lines += _section(path, command)
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if args[:1] == ["--check"]:
        target = Path(args[1]) if len(args) > 1 else TARGET
        if not target.is_file() or target.read_text("utf-8") != text:
            print(f"{target} is out of date: run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    if args:
        print("usage: python -m cli.reference [--check [PATH]]", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
